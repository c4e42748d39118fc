/**
 * Thrift compact protocol, generic: a struct decodes to its fields in wire order (id, type, value)
 * and encodes back to the same bytes, so a Parquet footer can be edited field by field (offsets
 * shifted, strings pinned) without a generated model of every Parquet struct.
 */
export const T = { TRUE: 1, FALSE: 2, I8: 3, I16: 4, I32: 5, I64: 6, DOUBLE: 7, BINARY: 8, LIST: 9, SET: 10, MAP: 11, STRUCT: 12 } as const;

export type Value = boolean | number | bigint | Buffer | ThriftList | ThriftMap | Field[];
export interface ThriftList {
  elementType: number;
  items: Value[];
}
export interface ThriftMap {
  keyType: number;
  valueType: number;
  entries: [Value, Value][];
}
export interface Field {
  id: number;
  type: number;
  value: Value;
}

class Reader {
  offset = 0;
  constructor(private readonly bytes: Buffer) {}
  byte(): number {
    if (this.offset >= this.bytes.length) throw new Error('thrift: the data ends early');
    return this.bytes[this.offset++]!;
  }
  varint(): bigint {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = this.byte();
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      if (shift > 63n) throw new Error('thrift: varint too long');
    }
  }
  zigzag(): bigint {
    const v = this.varint();
    return (v >> 1n) ^ -(v & 1n);
  }
  take(n: number): Buffer {
    if (this.offset + n > this.bytes.length) throw new Error('thrift: the data ends early');
    const out = Buffer.from(this.bytes.subarray(this.offset, this.offset + n));
    this.offset += n;
    return out;
  }
}

function readValue(r: Reader, type: number, inCollection: boolean): Value {
  switch (type) {
    case T.TRUE:
    case T.FALSE:
      // A field carries its boolean in its type; a list element is a byte of its own.
      return inCollection ? r.byte() === T.TRUE : type === T.TRUE;
    case T.I8:
      return (r.byte() << 24) >> 24;
    case T.I16:
    case T.I32:
      return Number(r.zigzag());
    case T.I64:
      return r.zigzag();
    case T.DOUBLE:
      return r.take(8).readDoubleLE(0);
    case T.BINARY:
      return r.take(Number(r.varint()));
    case T.LIST:
    case T.SET:
      return readList(r);
    case T.MAP:
      return readMap(r);
    case T.STRUCT:
      return readStruct(r);
    default:
      throw new Error(`thrift: unknown type ${type}`);
  }
}

function readList(r: Reader): ThriftList {
  const head = r.byte();
  const elementType = head & 0x0f;
  const size = head >> 4 === 15 ? Number(r.varint()) : head >> 4;
  const items: Value[] = [];
  for (let i = 0; i < size; i++) items.push(readValue(r, elementType, true));
  return { elementType, items };
}

function readMap(r: Reader): ThriftMap {
  const size = Number(r.varint());
  if (size === 0) return { keyType: 0, valueType: 0, entries: [] };
  const types = r.byte();
  const map: ThriftMap = { keyType: types >> 4, valueType: types & 0x0f, entries: [] };
  for (let i = 0; i < size; i++) map.entries.push([readValue(r, map.keyType, true), readValue(r, map.valueType, true)]);
  return map;
}

function readStruct(r: Reader): Field[] {
  const fields: Field[] = [];
  let last = 0;
  for (;;) {
    const head = r.byte();
    if (head === 0) return fields;
    const type = head & 0x0f;
    const id = head >> 4 === 0 ? Number(r.zigzag()) : last + (head >> 4);
    fields.push({ id, type, value: readValue(r, type, false) });
    last = id;
  }
}

/** A whole struct from `bytes` (e.g. a Parquet FileMetaData). */
export function decodeStruct(bytes: Buffer): Field[] {
  return readStruct(new Reader(bytes));
}

class Writer {
  private readonly parts: number[] = [];
  private readonly buffers: Buffer[] = [];
  byte(b: number): void {
    this.parts.push(b & 0xff);
  }
  varint(v: bigint): void {
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      this.byte(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    this.byte(Number(x));
  }
  zigzag(v: bigint): void {
    this.varint((v << 1n) ^ (v >> 63n));
  }
  bytes(b: Buffer): void {
    this.flush();
    this.buffers.push(b);
  }
  flush(): void {
    if (this.parts.length) this.buffers.push(Buffer.from(this.parts.splice(0)));
  }
  result(): Buffer {
    this.flush();
    return Buffer.concat(this.buffers);
  }
}

function writeValue(w: Writer, type: number, v: Value): void {
  if (type === T.TRUE || type === T.FALSE) w.byte(v ? T.TRUE : T.FALSE);
  else if (type === T.I8) w.byte(v as number);
  else if (type === T.I16 || type === T.I32) w.zigzag(BigInt(v as number));
  else if (type === T.I64) w.zigzag(v as bigint);
  else if (type === T.DOUBLE) {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v as number, 0);
    w.bytes(b);
  } else if (type === T.BINARY) {
    w.varint(BigInt((v as Buffer).length));
    w.bytes(v as Buffer);
  } else if (type === T.LIST || type === T.SET) writeList(w, v as ThriftList);
  else if (type === T.MAP) writeMap(w, v as ThriftMap);
  else if (type === T.STRUCT) writeStruct(w, v as Field[]);
  else throw new Error(`thrift: unknown type ${type}`);
}

function writeList(w: Writer, list: ThriftList): void {
  const n = list.items.length;
  if (n < 15) w.byte((n << 4) | list.elementType);
  else {
    w.byte(0xf0 | list.elementType);
    w.varint(BigInt(n));
  }
  for (const item of list.items) writeValue(w, list.elementType, item);
}

function writeMap(w: Writer, map: ThriftMap): void {
  w.varint(BigInt(map.entries.length));
  if (map.entries.length === 0) return;
  w.byte((map.keyType << 4) | map.valueType);
  for (const [k, v] of map.entries) {
    writeValue(w, map.keyType, k);
    writeValue(w, map.valueType, v);
  }
}

function writeStruct(w: Writer, fields: readonly Field[]): void {
  let last = 0;
  for (const f of fields) {
    const type = f.type === T.TRUE || f.type === T.FALSE ? (f.value ? T.TRUE : T.FALSE) : f.type;
    const delta = f.id - last;
    if (delta > 0 && delta <= 15) w.byte((delta << 4) | type);
    else {
      w.byte(type);
      w.zigzag(BigInt(f.id));
    }
    if (type !== T.TRUE && type !== T.FALSE) writeValue(w, type, f.value);
    last = f.id;
  }
  w.byte(0);
}

export function encodeStruct(fields: readonly Field[]): Buffer {
  const w = new Writer();
  writeStruct(w, fields);
  return w.result();
}

/** The field `id` of a struct, or undefined. */
export const field = (s: readonly Field[], id: number): Field | undefined => s.find((f) => f.id === id);
