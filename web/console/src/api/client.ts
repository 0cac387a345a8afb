// The console's only way to the API: openapi-fetch over the types
// openapi-typescript generates from /openapi.json (src/api/schema.d.ts), so
// a route or field the API does not have is a type error here.
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type Alert = Schemas["v1Alert"];
export type AlertStatus = Schemas["v1AlertStatus"];
export type Message = Schemas["v1AnnotatedMessage"];
export type Approval = Schemas["v1ApprovalRequest"];
export type Research = Schemas["v1ResearchState"];
export type AgentResponse = Schemas["v1AgentResponse"];
export type RpcStatus = Schemas["googleRpcStatus"];
export type FieldViolation = Schemas["googleRpcFieldViolation"];

const keyName = "groundcrew.apiKey";

/** The API key, kept for this tab only (sessionStorage), never in a URL. */
export const apiKey = {
  get: (): string => sessionStorage.getItem(keyName) ?? "",
  set: (k: string) => sessionStorage.setItem(keyName, k),
  clear: () => sessionStorage.removeItem(keyName),
};

type Listener = () => void;
const unauthorizedListeners = new Set<Listener>();

/** onUnauthorized calls fn whenever the API answers 401. */
export function onUnauthorized(fn: Listener): () => void {
  unauthorizedListeners.add(fn);
  return () => unauthorizedListeners.delete(fn);
}

const auth: Middleware = {
  onRequest({ request }) {
    const k = apiKey.get();
    if (k) request.headers.set("Authorization", `Bearer ${k}`);
    return request;
  },
  onResponse({ response }) {
    if (response.status === 401) unauthorizedListeners.forEach((fn) => fn());
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** ApiError is a failed call: its HTTP status, message and field violations. */
export class ApiError extends Error {
  constructor(
    readonly httpStatus: number,
    message: string,
    readonly violations: FieldViolation[] = [],
  ) {
    super(message);
  }

  /**
   * The violation message for a request field, e.g. "query" or
   * "roundConfig.maxResults". A violation on one entry of a list field
   * ("allowedDomains[1]", typed as one comma-separated input) is the
   * field's too, and says which entry.
   */
  forField(field: string): string | undefined {
    const want = camel(field);
    for (const v of this.violations) {
      const got = camel(v.field);
      if (got === want) return v.description;
      const entry = /^\[(\d+)\]$/.exec(got.slice(want.length));
      if (got.startsWith(want) && entry) return `entry ${Number(entry[1]) + 1}: ${v.description}`;
    }
    return undefined;
  }
}

/** camel turns proto field paths (round_config.max_results) into JSON names. */
export function camel(path: string): string {
  return path.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** toError reads a google.rpc.Status body (or anything else) into an ApiError. */
export function toError(status: number, body: unknown): ApiError {
  if (typeof body === "string") body = parseErrorText(body);
  const st = (body ?? {}) as RpcStatus;
  const violations: FieldViolation[] = [];
  for (const d of st.details ?? []) {
    if (d && "fieldViolations" in d && Array.isArray(d.fieldViolations)) violations.push(...d.fieldViolations);
  }
  const msg = st.message || (status === 0 ? "the gateway is unreachable" : `HTTP ${status}`);
  return new ApiError(status, msg, violations);
}

/**
 * parseErrorText reads an error body that was not plain JSON: the gateway
 * writes a streaming call's error as a Server-Sent Event when the request
 * asked for text/event-stream (`data: {"error": <status>}`).
 */
function parseErrorText(text: string): unknown {
  const data = text.trim().replace(/^data:\s*/, "");
  try {
    const v = JSON.parse(data) as { error?: unknown };
    // A stream's error event wraps the status: {"error": {...}}.
    return v && typeof v === "object" && "error" in v ? v.error : v;
  } catch {
    return undefined;
  }
}

/**
 * call unwraps an openapi-fetch result: the data, or an ApiError.
 * Use it as `await call(api.GET("/v1/alerts", {...}))`.
 */
export async function call<T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await p;
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw toError(0, undefined);
  }
  if (r.error !== undefined || !r.response.ok) throw toError(r.response.status, r.error);
  return r.data as T;
}

/**
 * events reads a Server-Sent Events body (the gateway's form of a server
 * stream) and yields each event's JSON. A stream that fails mid-way sends
 * an event with an `error` (google.rpc.Status), raised here as ApiError.
 */
export async function* events<T>(body: ReadableStream<Uint8Array> | null): AsyncGenerator<T> {
  if (!body) return;
  const reader = body.pipeThrough(new TextDecoderStream() as unknown as ReadableWritablePair<string, Uint8Array>).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += value;
    let i: number;
    while ((i = buf.indexOf("\n\n")) >= 0) {
      const raw = buf.slice(0, i);
      buf = buf.slice(i + 2);
      const data = raw
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      if (!data) continue;
      const ev = JSON.parse(data) as { result?: T; error?: RpcStatus };
      if (ev.error) throw toError(ev.error.code === 3 ? 400 : 500, ev.error);
      yield (ev.result ?? ev) as T;
    }
  }
}
