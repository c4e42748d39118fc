import { z } from 'zod';
import { correctionModelSchema } from '../../datasets/correction-model.ts';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { datasetSchemaPrefix, keyedRouteProblems } from './dataset-operation.ts';
import { rateLimitHeaders } from './headers.ts';
import { componentRef, type SchemaObject } from './schema-convert.ts';

/** The models of a dataset's correction layer as GET /api/v1/<dataset>/corrections answers them. */
export function correctionModelsSchema(d: DatasetDescriptor) {
  if (!d.correction) throw new Error(`${d.name} has no correction layer`);
  const model = correctionModelSchema(d.correction.quantities).meta({
    description: `A published correction model, as its file holds it. A rule applies to the readings of its station (any with \`*\`) and quantity with fromUtc ≤ ${d.time?.column ?? 'time'} < toUtc (null: open): corrected = raw × factor + offset; no two rules of a model overlap.`,
  });
  return z.object({
    dataset: z.literal(d.name),
    latest: z.string().nullable().meta({ description: `Id of the model ${d.correction.series.param}=${d.correction.series.value} applies when ${d.correction.param} is not given; null when none is published.` }),
    models: z.array(model).meta({ description: 'Every published model, oldest publishedUtc first.' }),
  });
}

/** Component id of the listing's schema. */
export const correctionModelsId = (d: DatasetDescriptor): string => `${datasetSchemaPrefix(d)}CorrectionModels`;

/** GET /api/v1/<dataset>/corrections: behind the key, like the data it corrects. */
export function correctionsOperation(d: DatasetDescriptor): SchemaObject {
  return {
    operationId: `get${datasetSchemaPrefix(d)}Corrections`,
    tags: ['Data'],
    summary: `${d.title}: the published correction models`,
    description: `The correction models ${d.correction?.series.param}=${d.correction?.series.value} can apply, with their rules. A model file that cannot be read or is invalid makes this a 503, as it makes the corrected series one.`,
    security: [{ bearerAuth: [] }, { basicAuth: [] }],
    parameters: [],
    responses: {
      200: { description: 'The published models.', headers: rateLimitHeaders(), content: { 'application/json': { schema: { $ref: componentRef(correctionModelsId(d)) } } } },
      ...keyedRouteProblems(),
    },
  };
}
