// /console/ask: choose a collection, stream the answer (Server-Sent Events
// through the gateway), show the primary source, the retrieved chunks with
// their scores, and an out-of-scope answer plainly as such.
import { useEffect, useRef, useState } from "preact/hooks";
import { api, call, events, toError, type AgentResponse, type Schemas } from "../api/client";
import { Empty, ErrorBox, Field, Loading } from "../ui";

type Collection = Schemas["v1Collection"];
type StreamEvent = Schemas["v1AskStreamResponse"];

export function AskPage() {
  const [collections, setCollections] = useState<Collection[] | null>(null);
  const [collection, setCollection] = useState("");
  const [query, setQuery] = useState("");
  const [partial, setPartial] = useState("");
  const [answer, setAnswer] = useState<AgentResponse | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const abort = useRef<AbortController | null>(null);

  useEffect(() => {
    call(api.GET("/v1/collections"))
      .then((r) => {
        const cs = r.collections ?? [];
        setCollections(cs);
        if (cs[0]?.name) setCollection((c) => c || cs[0]!.name!);
      })
      .catch((e) => {
        setCollections([]);
        setError(e);
      });
    return () => abort.current?.abort();
  }, []);

  const ask = async (e: Event) => {
    e.preventDefault();
    abort.current?.abort();
    const ctl = new AbortController();
    abort.current = ctl;
    setBusy(true);
    setError(null);
    setAnswer(null);
    setPartial("");
    try {
      const r = await api.POST("/v1/collections/{collection}:askStream", {
        params: { path: { collection } },
        body: { query },
        headers: { Accept: "text/event-stream" },
        parseAs: "stream",
        signal: ctl.signal,
      });
      if (!r.response.ok) throw toError(r.response.status, r.error);
      let text = "";
      for await (const ev of events<StreamEvent>(r.data ?? null)) {
        if (ev.delta) {
          text += ev.delta;
          setPartial(text);
        }
        if (ev.response) setAnswer(ev.response);
      }
    } catch (err) {
      if (!(err instanceof DOMException && err.name === "AbortError")) setError(err);
    } finally {
      setBusy(false);
    }
  };

  if (collections === null) return <Loading />;
  return (
    <section aria-labelledby="h-ask">
      <h1 id="h-ask">Ask a collection</h1>
      {collections.length === 0 && !error ? (
        <Empty title="No collections yet.">
          <p>
            Ingest documents first: <code>go run ./services/rag/cmd/rag-ingest -collection NAME DIR</code>, or{" "}
            <code>POST /v1/collections/NAME/documents</code> with{" "}
            <code>{`{"documents":[{"url":"…","title":"…","markdown":"…"}]}`}</code>.
          </p>
        </Empty>
      ) : (
        <form class="stack" onSubmit={ask} aria-label="Ask">
          <Field label="Collection" name="collection" error={error}>
            {(id, inv, d) => (
              <select id={id} aria-invalid={inv} aria-describedby={d} value={collection} onChange={(e) => setCollection(e.currentTarget.value)}>
                {collections.map((c) => (
                  <option value={c.name}>
                    {c.name} {c.documentCount ? `(${c.documentCount} documents)` : ""}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Question" name="query" error={error}>
            {(id, inv, d) => (
              <textarea id={id} aria-invalid={inv} aria-describedby={d} value={query} onInput={(e) => setQuery(e.currentTarget.value)} rows={3} />
            )}
          </Field>
          <div class="actions">
            <button type="submit" disabled={busy}>
              {busy ? "Answering…" : "Ask"}
            </button>
          </div>
        </form>
      )}
      <ErrorBox error={error} />
      {(partial || answer) && <Answer partial={partial} answer={answer} />}
    </section>
  );
}

function Answer({ partial, answer }: { partial: string; answer: AgentResponse | null }) {
  if (answer?.isOutOfScope) {
    return (
      <div class="out-of-scope" id="answer" role="status">
        <h2>Out of scope</h2>
        <p>This collection is not about that question, so it gives no answer from it.</p>
        <p>
          <q>{answer.answer}</q>
        </p>
        {answer.outOfScopeReason && <p class="muted">Why: {answer.outOfScopeReason}</p>}
      </div>
    );
  }
  const chunks = answer?.matchedChunks ?? [];
  return (
    <div id="answer" aria-live="polite">
      <h2>Answer</h2>
      <p class="answer-text">{answer?.answer ?? partial}</p>
      {answer && (
        <>
          {answer.primarySource && (
            <p class="primary-source" id="primary-source">
              <strong>Primary source:</strong> {answer.primarySource}
            </p>
          )}
          <p class="muted">
            {answer.queryTime !== undefined && `${answer.queryTime.toFixed(2)} s`} {answer.model && `· ${answer.model}`}
          </p>
          {(answer.sources ?? []).length > 0 && (
            <>
              <h3>Sources</h3>
              <ul id="answer-sources">
                {documents(answer.sources!).map((d) => (
                  <li>
                    <a href={d.url} rel="noopener noreferrer" target="_blank">
                      {d.title || d.url}
                    </a>
                    {d.chunks > 1 && <span class="muted"> · {d.chunks} chunks</span>}
                  </li>
                ))}
              </ul>
            </>
          )}
          <h3>Retrieved chunks</h3>
          {chunks.length === 0 ? (
            <p class="muted">None.</p>
          ) : (
            <ol class="sources">
              {chunks.map((c) => (
                <li>
                  <span class="score">{(c.similarityScore ?? 0).toFixed(3)}</span>{" "}
                  <a href={c.source?.url} rel="noopener noreferrer" target="_blank">
                    {c.source?.title || c.source?.url}
                  </a>{" "}
                  <span class="muted">chunk {c.source?.chunkIndex ?? 0}</span>
                  <Excerpt text={c.text ?? ""} />
                </li>
              ))}
            </ol>
          )}
        </>
      )}
    </div>
  );
}

/**
 * documents lists each cited document once, in the order the answer first
 * cites it, with how many of its chunks it cites (sources has one entry
 * per chunk).
 */
export function documents(sources: { url?: string; title?: string }[]): { url?: string; title?: string; chunks: number }[] {
  const out: { url?: string; title?: string; chunks: number }[] = [];
  for (const s of sources) {
    const seen = out.find((d) => d.url === s.url);
    if (seen) seen.chunks++;
    else out.push({ url: s.url, title: s.title, chunks: 1 });
  }
  return out;
}

/** Excerpt shows the start of a long chunk, the rest on request. */
function Excerpt({ text }: { text: string }) {
  if (text.length <= 280) return <blockquote>{text}</blockquote>;
  return (
    <details class="chunk">
      <summary>
        <blockquote>{text.slice(0, 280)}…</blockquote>
      </summary>
      <blockquote>{text}</blockquote>
    </details>
  );
}
