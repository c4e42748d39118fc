import type { CorrectionModel, CorrectionRule } from '../../datasets/correction-model.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { formatInstant, parseInstant } from '../instant.ts';

type Bind = (value: string) => string;

/** A rule's instant as the wire writes it (parseInstant never fails on an instant the model schema admitted). */
const instant = (text: string) => formatInstant(parseInstant(text)!);

function ruleApplies(d: DatasetDescriptor, r: CorrectionRule, col: (name: string) => string, bind: Bind): string {
  const layer = d.correction!;
  const time = d.time!.column;
  const conditions: string[] = [];
  if (r.stationId !== '*') conditions.push(`${col(layer.stationColumn)} = ${bind(r.stationId)}`);
  if (r.fromUtc !== null) conditions.push(`${col(time)} >= ${bind(instant(r.fromUtc))}::TIMESTAMPTZ`);
  if (r.toUtc !== null) conditions.push(`${col(time)} < ${bind(instant(r.toUtc))}::TIMESTAMPTZ`);
  return conditions.length ? conditions.join(' AND ') : 'true';
}

/**
 * The value of `quantity` in the correction layer of `model`: raw × factor + offset for a reading
 * that a rule of the quantity covers (its station or `*`, fromUtc ≤ time < toUtc), raw elsewhere.
 * Every rule value is bound through `bind`, never written into the text; without a model, or
 * without a rule for the quantity, the raw column itself. Rules of one model never overlap, so
 * the order of the branches does not matter. Every select of readings takes its values here.
 */
export function correctedValue(d: DatasetDescriptor, model: CorrectionModel | null, quantity: string, col: (name: string) => string, bind: Bind): string {
  const raw = col(quantity);
  const rules = model && d.correction && d.time ? model.rules.filter((r) => r.quantity === quantity) : [];
  if (rules.length === 0) return raw;
  const double = (v: number) => `CAST(${bind(String(v))} AS DOUBLE)`;
  const branches = rules.map((r) => `WHEN ${ruleApplies(d, r, col, bind)} THEN ${raw} * ${double(r.factor)} + ${double(r.offset)}`);
  return `(CASE ${branches.join(' ')} ELSE ${raw} END)`;
}
