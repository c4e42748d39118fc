/**
 * The two fields of a Parquet footer (FileMetaData) that a reader of untrusted files needs: the row
 * count (field 3) and the key-value metadata (field 5). A minimal Thrift compact-protocol walker
 * skips every other field unread and allocates nothing for it, so a footer cut short, or forged
 * with counts larger than its bytes, fails at the end of its bytes after work and memory
 * proportional to what is kept, never to what it claims. (`thrift-compact.ts` decodes a whole
 * footer, for editing footers the service wrote itself.)
 */

const STOP = 0;
const TYPE = { TRUE: 1, FALSE: 2, I8: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8, LIST: 9, SET: 10, MAP: 11, STRUCT: 12, UUID: 13 };

class CompactReader {
  offset = 0;
  constructor(private readonly bytes: Uint8Array) {}

  byte(): number {
    if (this.offset >= this.bytes.length) throw new Error('Parquet footer ends early');
    return this.bytes[this.offset++]!;
  }

  varint(): number {
    let value = 0;
    for (let shift = 0; ; shift += 7) {
      const b = this.byte();
      // Lengths and counts fit in 53 bits; larger varints (i64 values) are only skipped.
      if (shift < 49) value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
    }
  }

  /** A zigzag varint (i32/i64 value) that fits in 53 bits. */
  zigzag(): number {
    const v = this.varint();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  binary(): Uint8Array {
    const length = this.varint();
    if (this.offset + length > this.bytes.length) throw new Error('Parquet footer ends early');
    const out = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  /** Field headers of a struct, until its stop byte: [field id, type]. */
  *fields(): Generator<[number, number]> {
    let id = 0;
    for (let header = this.byte(); header !== STOP; header = this.byte()) {
      const delta = header >> 4;
      if (delta === 0) {
        const zigzag = this.varint();
        id = (zigzag >>> 1) ^ -(zigzag & 1);
      } else id += delta;
      yield [id, header & 0x0f];
    }
  }

  listHeader(): { size: number; type: number } {
    const header = this.byte();
    return { size: header >> 4 === 15 ? this.varint() : header >> 4, type: header & 0x0f };
  }

  /**
   * A list, set or map element. Booleans there are one byte each, not folded into a header: every
   * element consumes input, so a forged count ends at the end of the footer instead of looping.
   */
  element(type: number): void {
    if (type === TYPE.TRUE || type === TYPE.FALSE) this.byte();
    else this.skip(type);
  }

  skip(type: number): void {
    if (type === TYPE.TRUE || type === TYPE.FALSE) return;
    if (type === TYPE.I8) return void this.byte();
    if (type === TYPE.I16 || type === TYPE.I32 || type === TYPE.I64) return void this.varint();
    if (type === TYPE.DOUBLE) return void (this.offset += 8);
    if (type === TYPE.UUID) return void (this.offset += 16);
    if (type === TYPE.BINARY) return void this.binary();
    if (type === TYPE.STRUCT) {
      for (const [, t] of this.fields()) this.skip(t);
      return;
    }
    if (type === TYPE.LIST || type === TYPE.SET) {
      const { size, type: element } = this.listHeader();
      for (let i = 0; i < size; i++) this.element(element);
      return;
    }
    if (type === TYPE.MAP) {
      const size = this.varint();
      if (size === 0) return;
      const kinds = this.byte();
      for (let i = 0; i < size; i++) this.element(kinds >> 4), this.element(kinds & 0x0f);
      return;
    }
    throw new Error(`Parquet footer: unknown Thrift type ${type}`);
  }
}

export interface FooterFields {
  /** FileMetaData.num_rows; null when absent. */
  rows: number | null;
  keyValues: Map<string, string>;
}

/** Row count and key-value metadata of a Parquet footer (the bytes between the data and the footer length). */
export function footerFields(footer: Uint8Array): FooterFields {
  const r = new CompactReader(footer);
  const keyValues = new Map<string, string>();
  let rows: number | null = null;
  const text = new TextDecoder();
  for (const [id, type] of r.fields()) {
    if (id === 3 && type === TYPE.I64) {
      rows = r.zigzag();
      continue;
    }
    if (id !== 5 || type !== TYPE.LIST) {
      r.skip(type);
      continue;
    }
    const { size } = r.listHeader();
    for (let i = 0; i < size; i++) {
      let key = '';
      let value = '';
      for (const [field, t] of r.fields()) {
        if (field === 1 && t === TYPE.BINARY) key = text.decode(r.binary());
        else if (field === 2 && t === TYPE.BINARY) value = text.decode(r.binary());
        else r.skip(t);
      }
      keyValues.set(key, value);
    }
  }
  return { rows, keyValues };
}
