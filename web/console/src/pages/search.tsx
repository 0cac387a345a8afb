// /console/search: a query box with engine choice and filters.
import { useEffect, useState } from "preact/hooks";
import { api, call, type Schemas } from "../api/client";
import { Empty, ErrorBox, Field } from "../ui";

type Engine = Schemas["searchV1Engine"];
type Result = Schemas["v1SearchResponse"];

const list = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((x) => x.trim())
    .filter(Boolean);

export function SearchPage() {
  const [engines, setEngines] = useState<Schemas["v1EngineStatus"][]>([]);
  const [query, setQuery] = useState("");
  const [engine, setEngine] = useState<Engine>("AUTO");
  const [maxResults, setMaxResults] = useState("5");
  const [allowed, setAllowed] = useState("");
  const [blocked, setBlocked] = useState("");
  const [result, setResult] = useState<Result | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    call(api.GET("/v1/search/engines"))
      .then((r) => setEngines(r.engines ?? []))
      .catch(() => setEngines([]));
  }, []);
  const search = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await call(
        api.POST("/v1/search", {
          body: {
            query,
            engine,
            maxResults: Number(maxResults) || undefined,
            allowedDomains: list(allowed),
            blockedDomains: list(blocked),
          },
        }),
      );
      setResult(r);
      setError(null);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="h-search">
      <h1 id="h-search">Search</h1>
      <form class="stack" onSubmit={search} aria-label="Search">
        <Field label="Query" name="query" error={error}>
          {(id, inv, d) => (
            <input id={id} type="search" aria-invalid={inv} aria-describedby={d} value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
          )}
        </Field>
        <div class="row">
          <Field label="Engine" name="engine" error={error}>
            {(id) => (
              <select id={id} value={engine} onChange={(e) => setEngine(e.currentTarget.value as Engine)}>
                <option value="AUTO">auto</option>
                {engines
                  .filter((x) => x.engine && x.engine !== "AUTO")
                  .map((x) => (
                    <option value={x.engine} disabled={!x.configured}>
                      {x.engine!.toLowerCase()}
                      {x.configured ? "" : ` (set ${x.configVariable})`}
                    </option>
                  ))}
              </select>
            )}
          </Field>
          <Field label="Results" name="max_results" error={error}>
            {(id, inv, d) => (
              <input id={id} type="number" min={1} max={10} aria-invalid={inv} aria-describedby={d} value={maxResults} onInput={(e) => setMaxResults(e.currentTarget.value)} />
            )}
          </Field>
        </div>
        <div class="row">
          <Field label="Only these domains" name="allowed_domains" error={error} hint="comma-separated">
            {(id, inv, d) => (
              <input id={id} aria-invalid={inv} aria-describedby={d} value={allowed} onInput={(e) => setAllowed(e.currentTarget.value)} />
            )}
          </Field>
          <Field label="Never these domains" name="blocked_domains" error={error} hint="comma-separated">
            {(id, inv, d) => (
              <input id={id} aria-invalid={inv} aria-describedby={d} value={blocked} onInput={(e) => setBlocked(e.currentTarget.value)} />
            )}
          </Field>
        </div>
        <ErrorBox error={error} />
        <div class="actions">
          <button type="submit">Search</button>
        </div>
      </form>
      {result &&
        ((result.results ?? []).length === 0 ? (
          <Empty title="No results.">
            <p>
              The local engine searches documents you index with <code>POST /v1/search/documents</code> (or{" "}
              <code>bin/search-index</code>).
            </p>
          </Empty>
        ) : (
          <ol class="sources" id="search-results">
            {result.results!.map((r) => (
              <li>
                <a href={r.url} rel="noopener noreferrer" target="_blank">
                  {r.title || r.url}
                </a>{" "}
                <span class="muted">
                  {r.sourceDomain} · {(r.score ?? 0).toFixed(3)}
                </span>
                {r.snippet && <blockquote>{r.snippet}</blockquote>}
              </li>
            ))}
          </ol>
        ))}
    </section>
  );
}
