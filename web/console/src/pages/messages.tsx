// /console/messages: the grounded-answer audit. Each citation's span is
// highlighted at its stored offsets (Unicode code points), beside its
// source; reviewers approve or flag with a note.
import type { VNode } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, call, type Message, type Schemas } from "../api/client";
import { Chip, Empty, ErrorBox, Field, Link, Loading, when } from "../ui";

type Citation = Schemas["v1Citation"];
type MsgStatus = Schemas["v1AnnotatedMessageStatus"];

export function MessagesPage() {
  const [status, setStatus] = useState<MsgStatus | "">("");
  const [domain, setDomain] = useState("");
  const [list, setList] = useState<Message[] | null>(null);
  const [token, setToken] = useState("");
  const [error, setError] = useState<unknown>(null);
  const load = async (pageToken?: string) => {
    try {
      const r = await call(
        api.GET("/v1/messages", {
          params: { query: { pageSize: 50, pageToken, status: status || undefined, domain: domain.trim() || undefined } },
        }),
      );
      setList((l) => (pageToken ? [...(l ?? []), ...(r.messages ?? [])] : (r.messages ?? [])));
      setToken(r.nextPageToken ?? "");
      setError(null);
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    setList(null);
    void load();
  }, [status, domain]);
  return (
    <section aria-labelledby="h-messages">
      <h1 id="h-messages">Grounded answers</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter answers">
        <Field label="Status" name="status">
          {(id) => (
            <select id={id} value={status} onChange={(e) => setStatus(e.currentTarget.value as MsgStatus | "")}>
              <option value="">Any</option>
              {(["PROCESSED", "NEEDS_REVIEW", "FAILED", "APPROVED", "REJECTED"] as const).map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Cites domain" name="domain" error={error} hint="e.g. go.dev">
          {(id, inv, d) => (
            <input
              id={id}
              aria-invalid={inv}
              aria-describedby={d}
              value={domain}
              onChange={(e) => setDomain(e.currentTarget.value)}
            />
          )}
        </Field>
      </form>
      <ErrorBox error={error} />
      {list === null && !error ? (
        <Loading />
      ) : !list?.length ? (
        <Empty title="No grounded answers stored.">
          <p>
            They are written by <code>POST /v1/ground</code> and by every enriched alert.
          </p>
        </Empty>
      ) : (
        <>
          <ul class="rows">
            {list.map((m) => (
              <li key={m.id}>
                <Link href={`/console/messages/${m.id}`}>
                  <Chip value={m.status} /> <span class="row-title">{m.summary || m.text?.slice(0, 120)}</span>
                  <span class="muted">
                    {(m.citations ?? []).length} citations · {when(m.createTime)}
                  </span>
                </Link>
              </li>
            ))}
          </ul>
          {token && (
            <button type="button" onClick={() => load(token)}>
              Older answers
            </button>
          )}
        </>
      )}
    </section>
  );
}

/** Marker is one cited span found in the text (parsedMetadata.markers). */
type Marker = { start?: number; end?: number; sources?: number[] };

/** markersOf reads the cited spans a message records in parsedMetadata. */
function markersOf(m: Message): Marker[] {
  const meta = m.parsedMetadata as unknown as { markers?: Marker[] } | undefined;
  return Array.isArray(meta?.markers) ? meta.markers : [];
}

/** inlineMarker finds the "[1]" or "[1, 2]" markers a text may carry itself. */
const inlineMarker = /\[\d+(?:\s*,\s*\d+)*\]/;

/**
 * highlight splits text at the cited spans (code-point offsets) and marks
 * each with the numbers of the sources that back it, as the Sources list
 * numbers them. The spans are the message's markers (every sentence that
 * cites, numbered by evidence; results maps an evidence number to its
 * citation by URL), else the citations' own spans. A number is added after
 * a span only when the text carries no markers of its own, so none shows
 * twice.
 */
export function highlight(
  text: string,
  citations: Citation[],
  markers: Marker[] = [],
  results: { url?: string }[] = [],
): (string | VNode)[] {
  const cps = Array.from(text);
  const cuts = new Set<number>([0, cps.length]);
  const byEvidence = (n: number) => {
    const url = results[n - 1]?.url;
    const i = url ? citations.findIndex((c) => c.url === url) : -1;
    return i >= 0 ? i + 1 : n;
  };
  const raw = markers.length
    ? markers.map((mk) => ({ nums: (mk.sources ?? []).map(byEvidence), s: mk.start ?? 0, e: mk.end ?? 0 }))
    : citations.map((c, i) => ({ nums: [i + 1], s: c.startIndex ?? 0, e: c.endIndex ?? 0 }));
  const spans = raw
    .map((x) => ({ ...x, s: Math.max(0, x.s), e: Math.min(cps.length, x.e) }))
    .filter((x) => x.e > x.s);
  spans.forEach((x) => (cuts.add(x.s), cuts.add(x.e)));
  const numbered = !inlineMarker.test(text);
  const points = [...cuts].sort((a, b) => a - b);
  const out: (string | VNode)[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    const piece = cps.slice(a, b).join("");
    const by = [...new Set(spans.filter((x) => x.s <= a && x.e >= b).flatMap((x) => x.nums))].sort((x, y) => x - y);
    const ends = spans.some((x) => x.e === b && x.s <= a);
    out.push(
      by.length ? (
        <mark data-citations={by.join(",")} title={`source ${by.join(", ")}`}>
          {piece}
          {numbered && ends && <sup>[{by.join(",")}]</sup>}
        </mark>
      ) : (
        piece
      ),
    );
  }
  return out;
}

export function MessageDetail({ id }: { id: string }) {
  const [m, setM] = useState<Message | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [reviewError, setReviewError] = useState<unknown>(null);
  const [reviewer, setReviewer] = useState(localStorage.getItem("groundcrew.name") ?? "");
  const [notes, setNotes] = useState("");
  useEffect(() => {
    call(api.GET("/v1/messages/{id}", { params: { path: { id } } }))
      .then((msg) => setM(msg))
      .catch(setError);
  }, [id]);
  const review = async (status: MsgStatus) => {
    localStorage.setItem("groundcrew.name", reviewer);
    try {
      const r = await call(
        api.POST("/v1/messages/{id}:review", {
          params: { path: { id } },
          body: { status, reviewerId: reviewer, notes },
        }),
      );
      setM(r.message ?? m);
      setReviewError(null);
    } catch (e) {
      setReviewError(e);
    }
  };
  if (error) return <ErrorBox error={error} />;
  if (!m) return <Loading />;
  const cites = m.citations ?? [];
  return (
    <section aria-labelledby="h-message">
      <p>
        <Link href="/console/messages">← Grounded answers</Link>
      </p>
      <h1 id="h-message">
        Answer <Chip value={m.status} />
      </h1>
      <dl class="facts">
        <dt>Confidence</dt>
        <dd>{m.confidence === undefined ? "—" : m.confidence.toFixed(2)}</dd>
        <dt>Model</dt>
        <dd>{m.model || "—"}</dd>
        <dt>Query</dt>
        <dd>{m.groundedContext?.query || "—"}</dd>
        <dt>Raw artifact</dt>
        <dd>{m.artifactPath ? <code>{m.artifactPath}</code> : "—"}</dd>
        <dt>Created</dt>
        <dd>{when(m.createTime)}</dd>
      </dl>
      <h2>Summary</h2>
      <p>{m.summary}</p>
      <h2>Text with citations</h2>
      <p class="cited" id="cited-text">
        {highlight(m.text ?? "", cites, markersOf(m), m.groundedContext?.results ?? [])}
      </p>
      <h2>Sources</h2>
      {cites.length === 0 ? (
        <p class="muted">No citations.</p>
      ) : (
        <ol class="sources">
          {cites.map((c) => (
            <li>
              <a href={c.url} rel="noopener noreferrer" target="_blank">
                {c.title || c.url}
              </a>{" "}
              <span class="muted">
                {c.domain} · chars {c.startIndex ?? 0}–{c.endIndex ?? 0}
                {c.confidenceScore !== undefined && ` · score ${c.confidenceScore.toFixed(2)}`}
              </span>
              {c.snippet && <blockquote>{c.snippet}</blockquote>}
            </li>
          ))}
        </ol>
      )}
      <h2>Review</h2>
      {m.review?.reviewerId && (
        <p>
          Last review by <strong>{m.review.reviewerId}</strong> at {when(m.review.reviewTime)}: {m.review.notes}
        </p>
      )}
      <form class="stack" onSubmit={(e) => e.preventDefault()} aria-label="Review">
        <Field label="Your name" name="reviewer_id" error={reviewError}>
          {(fid, inv, d) => (
            <input id={fid} aria-invalid={inv} aria-describedby={d} value={reviewer} onInput={(e) => setReviewer(e.currentTarget.value)} />
          )}
        </Field>
        <Field label="Note" name="notes" error={reviewError}>
          {(fid, inv, d) => (
            <textarea id={fid} aria-invalid={inv} aria-describedby={d} value={notes} onInput={(e) => setNotes(e.currentTarget.value)} />
          )}
        </Field>
        <ErrorBox error={reviewError} />
        <div class="actions">
          <button type="button" onClick={() => review("APPROVED")}>
            Approve
          </button>
          <button type="button" class="danger" onClick={() => review("NEEDS_REVIEW")}>
            Flag
          </button>
        </div>
      </form>
    </section>
  );
}
