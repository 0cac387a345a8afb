// /console/research: start a run, watch it (the WatchResearch server stream
// as Server-Sent Events), critique score against the threshold and its
// reasons, the report rendered from Markdown, planned actions and their
// approvals.
import { useEffect, useState } from "preact/hooks";
import { api, call, events, toError, type Research, type Schemas } from "../api/client";
import { Markdown } from "../markdown";
import { Chip, Empty, ErrorBox, Field, Link, Loading, navigate, when } from "../ui";

type Watch = Schemas["v1WatchResearchResponse"];

function userId(): string {
  let id = localStorage.getItem("groundcrew.userId");
  if (!id) {
    id = crypto.randomUUID();
    localStorage.setItem("groundcrew.userId", id);
  }
  return id;
}

/** maxTopicChars is the longest topic the service accepts (DESIGN: 1..500). */
const maxTopicChars = 500;

export function ResearchPage() {
  const [topic, setTopic] = useState("");
  const [collection, setCollection] = useState("");
  const [maxIterations, setMaxIterations] = useState("3");
  const [threshold, setThreshold] = useState("0.8");
  const [error, setError] = useState<unknown>(null);
  const [runs, setRuns] = useState<Research[] | null>(null);
  const [listError, setListError] = useState<unknown>(null);
  // Every user's runs (an operator's view), or only this browser's.
  const [mine, setMine] = useState(false);
  const [token, setToken] = useState("");
  const loadRuns = async (pageToken?: string) => {
    try {
      const r = await call(api.GET("/v1/research", { params: { query: { pageSize: 50, pageToken, userId: mine ? userId() : undefined } } }));
      setRuns((l) => (pageToken ? [...(l ?? []), ...(r.runs ?? [])] : (r.runs ?? [])));
      setToken(r.nextPageToken ?? "");
      setListError(null);
    } catch (e) {
      setListError(e);
    }
  };
  useEffect(() => {
    setRuns(null);
    void loadRuns();
  }, [mine]);
  const start = async (e: Event) => {
    e.preventDefault();
    try {
      const r = await call(
        api.POST("/v1/research", {
          body: {
            topic,
            userId: userId(),
            collection: collection || undefined,
            maxIterations: Number(maxIterations) || undefined,
            qualityThreshold: threshold === "" ? undefined : Number(threshold),
          },
        }),
      );
      setError(null);
      if (r.run?.id) navigate(`/console/research/${r.run.id}`);
    } catch (err) {
      setError(err);
    }
  };
  return (
    <section aria-labelledby="h-research">
      <h1 id="h-research">Research</h1>
      <form class="stack" onSubmit={start} aria-label="Start research">
        <Field label="Topic" name="topic" error={error} hint={`${[...topic].length} of ${maxTopicChars} characters`}>
          {(id, inv, d) => (
            <textarea id={id} rows={2} aria-invalid={inv} aria-describedby={d} value={topic} onInput={(e) => setTopic(e.currentTarget.value)} />
          )}
        </Field>
        <div class="row">
          <Field label="Collection (optional)" name="collection" error={error}>
            {(id, inv, d) => (
              <input id={id} aria-invalid={inv} aria-describedby={d} value={collection} onInput={(e) => setCollection(e.currentTarget.value)} />
            )}
          </Field>
          <Field label="Iterations (at most 5)" name="max_iterations" error={error}>
            {(id, inv, d) => (
              <input id={id} type="number" min={1} max={5} aria-invalid={inv} aria-describedby={d} value={maxIterations} onInput={(e) => setMaxIterations(e.currentTarget.value)} />
            )}
          </Field>
          <Field label="Quality threshold" name="quality_threshold" error={error}>
            {(id, inv, d) => (
              <input id={id} type="number" step="0.05" min={0} max={1} aria-invalid={inv} aria-describedby={d} value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} />
            )}
          </Field>
        </div>
        <ErrorBox error={error} />
        <div class="actions">
          <button type="submit">Start research</button>
        </div>
      </form>
      <h2>Runs</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter runs">
        <label class="check">
          <input type="checkbox" checked={mine} onChange={(e) => setMine(e.currentTarget.checked)} /> Only runs started from this browser
        </label>
      </form>
      <ErrorBox error={listError} />
      {listError ? null : runs === null ? (
        <Loading />
      ) : runs.length === 0 ? (
        <Empty title={mine ? "No research runs started from this browser." : "No research runs yet."}>
          <p>Start one above: it plans, searches, critiques and refines until the quality threshold or 5 iterations.</p>
        </Empty>
      ) : (
        <ul class="rows" id="research-runs">
          {runs.map((r) => (
            <li key={r.id}>
              <Link href={`/console/research/${r.id}`}>
                <Chip value={r.status} /> <span class="row-title">{r.topic}</span>
                <span class="muted">{when(r.createTime)}</span>
              </Link>
            </li>
          ))}
        </ul>
      )}
      {runs && token && (
        <button type="button" onClick={() => loadRuns(token)}>
          Older runs
        </button>
      )}
    </section>
  );
}

/**
 * findingsBody is the findings without what the page already shows: their
 * title (the page's heading is the topic) and an "Executive summary"
 * section, which a model may write too (the summary shows once, above).
 */
export function findingsBody(md: string): string {
  return md
    .replace(/^\s*#\s+[^\n]*\n/, "")
    .replace(/^#{1,6}\s+executive summary\s*\n[\s\S]*?(?=^#{1,6}\s|(?![\s\S]))/im, "");
}

/** dropped reads a critique reason naming the off-topic sources it dropped. */
const dropped = /^dropped (\d+) off-topic sources?: (.*)$/s;

/**
 * Reason shows a critique reason; the dropped off-topic sources are listed
 * by title under their count (folded), not as a line of URLs.
 */
function Reason({ text }: { text: string }) {
  const m = dropped.exec(text);
  if (!m) return <>{text}</>;
  const items = m[2]!.split("; ");
  const more = /^and (\d+) more$/.exec(items[items.length - 1] ?? "");
  if (more) items.pop();
  return (
    <details class="dropped">
      <summary>
        {m[1]} off-topic {m[1] === "1" ? "source" : "sources"} dropped
      </summary>
      <ul>
        {items.map((it) => {
          // "Title (https://…)": the title, linked.
          const u = / \((https?:\/\/[^)\s]+)\)$/.exec(it);
          const title = u ? it.slice(0, u.index) : it;
          return <li>{u ? <a href={u[1]} rel="noopener noreferrer" target="_blank">{title || u[1]}</a> : title}</li>;
        })}
        {more && <li class="muted">and {more[1]} more</li>}
      </ul>
    </details>
  );
}

/** unsettled says whether a run or its planned actions may still change. */
function unsettled(run: Research): boolean {
  if (run.status !== "FINISHED" && run.status !== "FAILED") return true;
  return (run.plannedActions ?? []).some((a) => a.status === "AWAITING_APPROVAL" || a.status === "QUEUED");
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      reject(new DOMException("aborted", "AbortError"));
    });
  });
}

export function ResearchDetail({ id }: { id: string }) {
  const [run, setRun] = useState<Research | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ctl = new AbortController();
    (async () => {
      try {
        // The first state at once, then every change from the stream.
        const first = await call(api.GET("/v1/research/{id}", { params: { path: { id } }, signal: ctl.signal }));
        setRun(first.run ?? null);
        const r = await api.GET("/v1/research/{id}:watch", {
          params: { path: { id } },
          headers: { Accept: "text/event-stream" },
          parseAs: "stream",
          signal: ctl.signal,
        });
        if (!r.response.ok) throw toError(r.response.status, r.error);
        let last = first.run;
        for await (const ev of events<Watch>(r.data ?? null)) {
          if (ev.run) setRun((last = ev.run));
        }
        // The stream ends when the run finishes, but its planned actions
        // may still wait for an approval or to run: follow those by
        // re-reading, 1 s after a change, backing off to 8 s.
        let delay = 1000;
        while (last && unsettled(last) && !ctl.signal.aborted) {
          await sleep(delay, ctl.signal);
          const next = await call(api.GET("/v1/research/{id}", { params: { path: { id } }, signal: ctl.signal }));
          const changed = JSON.stringify(next.run?.plannedActions) !== JSON.stringify(last.plannedActions);
          delay = changed ? 1000 : Math.min(delay * 2, 8000);
          if (next.run) setRun((last = next.run));
        }
      } catch (e) {
        if (!(e instanceof DOMException && e.name === "AbortError")) setError(e);
      }
    })();
    return () => ctl.abort();
  }, [id]);
  if (!run) return error ? <ErrorBox error={error} /> : <Loading />;
  const score = run.qualityScore ?? run.critique?.qualityScore;
  const threshold = run.qualityThreshold ?? 0.8;
  return (
    <section aria-labelledby="h-run">
      <p>
        <Link href="/console/research">← Research</Link>
      </p>
      <h1 id="h-run">{run.topic}</h1>
      <p>
        <Chip value={run.status} />{" "}
        <span id="run-status" data-status={run.status}>
          iteration {run.iterationCount ?? 0} of {run.maxIterations ?? 5}
        </span>
      </p>
      <ErrorBox error={error} />
      {run.error && <p class="bad">{run.error}</p>}
      <h2>Quality</h2>
      <p>
        <meter min={0} max={1} low={threshold} optimum={1} value={score ?? 0} aria-label="quality score" />{" "}
        {score === undefined ? "not scored yet" : score.toFixed(2)} against the threshold {threshold.toFixed(2)}
      </p>
      {(run.critique?.reasons ?? []).length > 0 && (
        <ul id="critique">
          {run.critique!.reasons!.map((r) => (
            <li>
              <Reason text={r} />
            </li>
          ))}
        </ul>
      )}
      {(run.plan ?? []).length > 0 && (
        <>
          <h2>Plan</h2>
          <ol>
            {run.plan!.map((p) => (
              <li>{p}</li>
            ))}
          </ol>
        </>
      )}
      <h2>Planned actions</h2>
      {(run.plannedActions ?? []).length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="rows" id="planned-actions">
          {run.plannedActions!.map((a) => (
            <li data-action-status={a.status}>
              <div>
                <Chip value={a.status} /> <strong>{a.actionType}</strong> <Chip value={a.riskLevel} /> {a.description}
                {a.status === "AWAITING_APPROVAL" && (
                  <>
                    {" "}
                    <Link href="/console/approvals">Decide</Link>
                  </>
                )}
                {a.result && <p class={a.status === "FAILED" ? "bad" : "muted"}>{a.result}</p>}
              </div>
            </li>
          ))}
        </ul>
      )}
      <h2>Report</h2>
      {run.report ? (
        <div>
          {run.report.executiveSummary && (
            <>
              <h3>Executive summary</h3>
              <p id="executive-summary">
                <strong>{run.report.executiveSummary}</strong>
              </p>
            </>
          )}
          <Markdown source={findingsBody(run.report.findingsMarkdown ?? "")} />
          {(run.report.quality?.warnings ?? []).map((w) => (
            <p class="muted">⚠ {w}</p>
          ))}
        </div>
      ) : (
        <p class="muted">Written when the run finishes.</p>
      )}
      <h2>Every source found</h2>
      {(run.sources ?? []).length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <ol class="sources">
          {run.sources!.map((s) => (
            <li>
              <a href={s.url} rel="noopener noreferrer" target="_blank">
                {s.title || s.url}
              </a>
              {s.snippet && <blockquote>{s.snippet}</blockquote>}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
