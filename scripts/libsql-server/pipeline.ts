// Execution of Hrana stream requests (pipelines and cursors) for the local libSQL endpoint
// (development tooling).

import {
  type Batch,
  type BatchCond,
  type BatchResult,
  type CursorEntry,
  type CursorReqBody,
  type PipelineReqBody,
  RequestError,
  type SqlRef,
  type StreamRequest,
  type StreamResponse,
  type StreamResult,
  toHranaError,
} from "./hrana.ts";
import { inspectSql } from "./sql.ts";
import type { Stream, StreamRegistry } from "./streams.ts";

/**
 * Round trips and statements, for tests and benchmarks that count what an endpoint costs.
 * `statements` counts one per `execute`, one per batch step whose condition held, and one per
 * statement of a `sequence`, whether or not it succeeds.
 */
export interface Counters {
  pipelines: number;
  statements: number;
}

export async function runPipeline(
  registry: StreamRegistry,
  body: PipelineReqBody,
  counters: Counters,
): Promise<{ baton: string | null; base_url: null; results: StreamResult[] }> {
  const { baton, value: results } = await withStream(registry, body.baton, async (stream) => {
    const results: StreamResult[] = [];
    // The requests run in order and all of them run, even after one has failed.
    for (const request of body.requests) {
      try {
        results.push({ type: "ok", response: await handleRequest(stream, request, counters) });
      } catch (error) {
        results.push({ type: "error", error: toHranaError(error) });
      }
    }
    return results;
  });
  return { baton, base_url: null, results };
}

/** Runs the batch and returns the cursor entries that encode its result (Hrana 3 `v3/cursor`). */
export async function runCursor(
  registry: StreamRegistry,
  body: CursorReqBody,
  counters: Counters,
): Promise<{ baton: string | null; entries: CursorEntry[] }> {
  const { baton, value: result } = await withStream(registry, body.baton, (stream) =>
    executeBatch(stream, body.batch, counters),
  );
  const entries = result.step_results.flatMap((stepResult, step): CursorEntry[] => {
    const error = result.step_errors[step];
    if (error) return [{ type: "step_error", step, error }];
    if (!stepResult) return [];
    return [
      { type: "step_begin", step, cols: stepResult.cols },
      ...stepResult.rows.map((row): CursorEntry => ({ type: "row", row })),
      {
        type: "step_end",
        affected_row_count: stepResult.affected_row_count,
        last_insert_rowid: stepResult.last_insert_rowid,
      },
    ];
  });
  return { baton, entries };
}

async function withStream<T>(
  registry: StreamRegistry,
  baton: string | undefined,
  use: (stream: Stream) => Promise<T>,
): Promise<{ baton: string | null; value: T }> {
  const stream = registry.acquire(baton);
  try {
    const value = await use(stream);
    return { baton: registry.release(stream), value };
  } catch (error) {
    registry.release(stream);
    throw error;
  }
}

async function handleRequest(stream: Stream, request: StreamRequest, counters: Counters): Promise<StreamResponse> {
  if (stream.isClosed) throw new RequestError("The stream is closed", "STREAM_CLOSED");
  switch (request.type) {
    case "close":
      stream.close();
      return { type: "close" };
    case "execute": {
      const sql = resolveSql(stream, request.stmt);
      counters.statements++;
      return { type: "execute", result: await stream.connection.execute(sql, request.stmt) };
    }
    case "batch":
      return { type: "batch", result: await executeBatch(stream, request.batch, counters) };
    case "sequence": {
      const sql = resolveSql(stream, request);
      counters.statements += inspectSql(sql).statementCount;
      await stream.connection.sequence(sql);
      return { type: "sequence" };
    }
    case "describe":
      return { type: "describe", result: stream.connection.describe(resolveSql(stream, request)) };
    case "store_sql":
      if (stream.sqls.has(request.sql_id)) {
        throw new RequestError(`An SQL text with id ${request.sql_id} is already stored`, "SQL_EXISTS");
      }
      stream.sqls.set(request.sql_id, request.sql);
      return { type: "store_sql" };
    case "close_sql":
      stream.sqls.delete(request.sql_id);
      return { type: "close_sql" };
    case "get_autocommit":
      return { type: "get_autocommit", is_autocommit: stream.connection.isAutocommit };
  }
}

function resolveSql(stream: Stream, ref: SqlRef): string {
  if (ref.sql !== undefined) return ref.sql;
  const sql = stream.sqls.get(ref.sql_id);
  if (sql === undefined) throw new RequestError(`No SQL text is stored with id ${ref.sql_id}`, "SQL_NOT_FOUND");
  return sql;
}

type StepOutcome = "ok" | "error" | "skipped";

/** A failing step does not stop the batch: later steps decide from their conditions. */
async function executeBatch(stream: Stream, batch: Batch, counters: Counters): Promise<BatchResult> {
  const outcomes: StepOutcome[] = [];
  const result: BatchResult = { step_results: [], step_errors: [] };
  for (const step of batch.steps) {
    let stepResult = null;
    let stepError = null;
    try {
      if (step.condition === undefined || evaluate(step.condition, outcomes, stream)) {
        const sql = resolveSql(stream, step.stmt);
        counters.statements++;
        stepResult = await stream.connection.execute(sql, step.stmt);
      }
    } catch (error) {
      stepError = toHranaError(error);
    }
    outcomes.push(stepResult ? "ok" : stepError ? "error" : "skipped");
    result.step_results.push(stepResult);
    result.step_errors.push(stepError);
  }
  return result;
}

function evaluate(cond: BatchCond, outcomes: StepOutcome[], stream: Stream): boolean {
  switch (cond.type) {
    case "ok":
    case "error":
      if (cond.step >= outcomes.length) {
        throw new RequestError(
          `The condition of step ${outcomes.length} refers to step ${cond.step}, which has not run yet`,
          "BATCH_COND_INVALID",
        );
      }
      // A skipped step is neither ok nor an error.
      return outcomes[cond.step] === cond.type;
    case "not":
      return !evaluate(cond.cond, outcomes, stream);
    case "and":
      return cond.conds.every((c) => evaluate(c, outcomes, stream));
    case "or":
      return cond.conds.some((c) => evaluate(c, outcomes, stream));
    case "is_autocommit":
      return stream.connection.isAutocommit;
  }
}
