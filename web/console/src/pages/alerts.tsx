// /console/alerts: newest first, live, filters, pages; the detail shows the
// Telegram message as Telegram would, the enrichment and the timeline.
import { useEffect, useState } from "preact/hooks";
import { api, call, type Alert, type AlertStatus, type Message } from "../api/client";
import { useLive } from "../live";
import { AlertGroups } from "./groups";
import { TelegramMessage } from "../telegram";
import { Chip, Empty, ErrorBox, Field, Link, Loading, when } from "../ui";

const statuses: AlertStatus[] = ["RECEIVED", "ENRICHING", "DELIVERING", "DELIVERED", "FAILED", "DUPLICATE"];
const pageSize = 50;

/** labelMatch says whether an alert carries the label filter "key=value" (or "key"). */
function labelMatch(a: Alert, filter: string): boolean {
  if (!filter) return true;
  const [k, v] = filter.split("=", 2).map((s) => s.trim());
  const md = (a.metadata ?? {}) as Record<string, unknown>;
  const labels = (md.labels ?? md) as Record<string, unknown>;
  if (!k || !(k in labels)) return false;
  return v === undefined || String(labels[k]) === v;
}

export function AlertsPage() {
  const [status, setStatus] = useState<AlertStatus | "">("");
  const [source, setSource] = useState("");
  const [label, setLabel] = useState("");
  const [first, setFirst] = useState<Alert[] | null>(null);
  const [older, setOlder] = useState<Alert[]>([]);
  const [token, setToken] = useState("");
  const [error, setError] = useState<unknown>(null);

  // The first page is live; older pages are loaded on demand and kept.
  useLive(
    async (signal) => {
      try {
        const r = await call(
          api.GET("/v1/alerts", { params: { query: { pageSize, status: status || undefined } }, signal }),
        );
        setFirst(r.alerts ?? []);
        if (!older.length) setToken(r.nextPageToken ?? "");
        setError(null);
        return r.alerts?.map((a) => [a.id, a.status, a.updateTime]);
      } catch (e) {
        setError(e);
        throw e;
      }
    },
    [status],
  );
  useEffect(() => {
    setOlder([]);
    setFirst(null);
  }, [status]);

  const more = async () => {
    try {
      const r = await call(
        api.GET("/v1/alerts", { params: { query: { pageSize, pageToken: token, status: status || undefined } } }),
      );
      setOlder((o) => [...o, ...(r.alerts ?? [])]);
      setToken(r.nextPageToken ?? "");
    } catch (e) {
      setError(e);
    }
  };

  const seen = new Set<string>();
  const all = [...(first ?? []), ...older].filter((a) => {
    if (!a.id || seen.has(a.id)) return false;
    seen.add(a.id);
    return (!source || a.source === source) && labelMatch(a, label);
  });
  const sources = [...new Set([...(first ?? []), ...older].map((a) => a.source).filter(Boolean))] as string[];

  return (
    <section aria-labelledby="h-alerts">
      <h1 id="h-alerts">Alerts</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter alerts">
        <Field label="Status" name="status">
          {(id) => (
            <select id={id} value={status} onChange={(e) => setStatus(e.currentTarget.value as AlertStatus | "")}>
              <option value="">Any</option>
              {statuses.map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Source" name="source">
          {(id) => (
            <select id={id} value={source} onChange={(e) => setSource(e.currentTarget.value)}>
              <option value="">Any</option>
              {sources.map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Label" name="label" hint="key or key=value">
          {(id, _, d) => (
            <input id={id} aria-describedby={d} value={label} onInput={(e) => setLabel(e.currentTarget.value)} />
          )}
        </Field>
      </form>
      <AlertGroups />
      <h2>Recent alerts</h2>
      <ErrorBox error={error} />
      {first === null && !error ? (
        <Loading />
      ) : all.length === 0 ? (
        <Empty title="No alerts yet.">
          <p>
            Post one: <code>curl -X POST localhost:8080/v1/alerts -d '{`{"text":"disk full on db-1"}`}'</code>, or
            point Alertmanager at <code>/v1/alerts:alertmanager</code>.
          </p>
        </Empty>
      ) : (
        <>
          <p class="muted" aria-live="polite">
            {all.length} shown, newest first; updates live.
          </p>
          <ul class="rows" id="alert-list">
            {all.map((a) => (
              <li key={a.id} data-alert-id={a.id} data-status={a.status}>
                <Link href={`/console/alerts/${a.id}`}>
                  <Chip value={a.status} /> <span class="row-title">{firstLine(a.text)}</span>
                  <span class="muted">
                    {a.source} · {when(a.receivedAt)}
                  </span>
                </Link>
              </li>
            ))}
          </ul>
          {token && (
            <button type="button" onClick={more}>
              Older alerts
            </button>
          )}
        </>
      )}
    </section>
  );
}

function firstLine(s?: string): string {
  return (s ?? "").split("\n", 1)[0] ?? "";
}

export function AlertDetail({ id }: { id: string }) {
  const [alert, setAlert] = useState<Alert | null>(null);
  const [msg, setMsg] = useState<Message | null>(null);
  const [error, setError] = useState<unknown>(null);
  useLive(
    async (signal) => {
      try {
        const r = await call(api.GET("/v1/alerts/{id}", { params: { path: { id } }, signal }));
        setAlert(r.alert ?? null);
        setError(null);
        return [r.alert?.status, r.alert?.updateTime];
      } catch (e) {
        setError(e);
        throw e;
      }
    },
    [id],
  );
  const gid = alert?.groundingMessageId;
  useEffect(() => {
    if (!gid) return;
    call(api.GET("/v1/messages/{id}", { params: { path: { id: gid } } }))
      .then((m) => setMsg(m))
      .catch(() => setMsg(null));
  }, [gid]);

  if (error) return <ErrorBox error={error} />;
  if (!alert) return <Loading />;
  const timeline: [string, string | undefined][] = [
    ["Received", alert.receivedAt],
    ["Last change", alert.updateTime],
    ["Delivered", alert.deliverTime],
  ];
  return (
    <section aria-labelledby="h-alert">
      <p>
        <Link href="/console/alerts">← Alerts</Link>
      </p>
      <h1 id="h-alert">
        Alert <Chip value={alert.status} />
      </h1>
      <dl class="facts">
        <dt>Source</dt>
        <dd>{alert.source || "—"}</dd>
        <dt>Attempts</dt>
        <dd>{alert.attempts ?? 0}</dd>
        <dt>Destination</dt>
        <dd>{alert.destination || "—"}</dd>
        {alert.error && (
          <>
            <dt>Error</dt>
            <dd class="bad">{alert.error}</dd>
          </>
        )}
        {alert.enrichmentError && (
          <>
            <dt>Enrichment</dt>
            <dd class="bad">{alert.enrichmentError}</dd>
          </>
        )}
        {alert.duplicateOf && (
          <>
            <dt>Duplicate of</dt>
            <dd>
              <Link href={`/console/alerts/${alert.duplicateOf}`}>{alert.duplicateOf}</Link>
            </dd>
          </>
        )}
      </dl>
      <h2>Timeline</h2>
      <ol class="timeline">
        {timeline
          .filter(([, t]) => t)
          .map(([k, t]) => (
            <li>
              {k}: <time dateTime={t}>{when(t)}</time>
            </li>
          ))}
      </ol>
      <h2>Telegram message</h2>
      {alert.message?.text ? (
        <TelegramMessage text={alert.message.text} parseMode={alert.message.parseMode} />
      ) : (
        <p class="muted">Not rendered yet.</p>
      )}
      <h2>Enrichment</h2>
      {msg ? (
        <div>
          <p>{msg.summary}</p>
          <ul>
            {(msg.citations ?? []).map((c) => (
              <li>
                <a href={c.url} rel="noopener noreferrer" target="_blank">
                  {c.title || c.url}
                </a>{" "}
                <span class="muted">{c.domain}</span>
              </li>
            ))}
          </ul>
          <Link href={`/console/messages/${msg.id}`}>Audit record</Link>
        </div>
      ) : (
        <p class="muted">{gid ? "Loading…" : "No enrichment recorded for this alert."}</p>
      )}
      <h2>Original text</h2>
      <pre class="wrap">{alert.text}</pre>
    </section>
  );
}
