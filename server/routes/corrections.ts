import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DatasetDescriptor } from '../../datasets/index.ts';
import { CorrectionsUnavailableError } from '../../queries/errors.ts';
import type { AppContext } from '../app-context.ts';
import { invalidParameters, toProblem } from '../http/problems.ts';
import { parameterErrors } from '../params/query-params.ts';

const NoParameters = z.strictObject({});

/** GET /api/v1/<dataset>/corrections: the published correction models, newest last; 503 while a model file is unusable. */
export function registerCorrectionsRoute(app: FastifyInstance, ctx: AppContext, d: DatasetDescriptor): void {
  app.get(`/api/v1/${d.name}/corrections`, async (request) => {
    const raw = request.query as Record<string, unknown>;
    const parsed = NoParameters.safeParse(raw);
    if (!parsed.success) throw invalidParameters(parameterErrors(parsed.error, raw, []));
    const { models, failing } = await ctx.extract.corrections.load(d);
    if (failing.length > 0) throw toProblem(new CorrectionsUnavailableError(d.name, failing), ctx.config.retryAfterSeconds);
    return { dataset: d.name, latest: models.at(-1)?.id ?? null, models: models.map((m) => m.model) };
  });
}
