// /console/groups/{id}: one alert group (an Alertmanager or Grafana group
// notification) with its alerts, its enrichment, silence and
// acknowledgement; re-read while it can still change.
import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api/client";
import { useLive } from "../live";
import { Chip, ErrorBox, Link, Loading, when } from "../ui";

type Group = Schemas["v1AlertGroup"];

export function GroupDetail({ id }: { id: string }) {
  const [group, setGroup] = useState<Group | null>(null);
  const [error, setError] = useState<unknown>(null);
  useLive(
    async (signal) => {
      try {
        const r = await call(api.GET("/v1/alert-groups/{id}", { params: { path: { id } }, signal }));
        setGroup(r.alertGroup ?? null);
        setError(null);
        const g = r.alertGroup;
        return [g?.status, g?.updateTime, g?.alerts?.map((a) => [a.id, a.status])];
      } catch (e) {
        setError(e);
        throw e;
      }
    },
    [id],
  );
  if (!group) return error ? <ErrorBox error={error} /> : <Loading />;
  const labels = Object.entries(group.commonLabels ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return (
    <section aria-labelledby="h-group">
      <p>
        <Link href="/console/alerts">← Alerts</Link>
      </p>
      <h1 id="h-group">
        {group.title || group.groupKey} <Chip value={group.status} />
      </h1>
      <ErrorBox error={error} />
      <dl class="facts">
        <dt>Alerts</dt>
        <dd>
          {group.firingCount ?? 0} firing · {group.resolvedCount ?? 0} resolved
        </dd>
        <dt>Source</dt>
        <dd>{group.source || "—"}</dd>
        <dt>Chat</dt>
        <dd>{group.destination || "—"}</dd>
        <dt>Updated</dt>
        <dd>{when(group.updateTime)}</dd>
        {labels.length > 0 && (
          <>
            <dt>Common labels</dt>
            <dd>
              {labels.map(([k, v]) => (
                <code class="label">
                  {k}={v}
                </code>
              ))}
            </dd>
          </>
        )}
        <dt>Enrichment</dt>
        <dd>
          {group.groundingMessageId ? (
            <Link href={`/console/messages/${group.groundingMessageId}`}>the grounded answer</Link>
          ) : group.enrichmentError ? (
            <span class="bad">{group.enrichmentError}</span>
          ) : (
            "—"
          )}
        </dd>
        {group.silence?.silenceId && (
          <>
            <dt>Silence</dt>
            <dd>
              {group.silence.expired ? "expired" : `until ${when(group.silence.endTime)}`}
              {(group.silence.actor || group.silence.by) && ` · by ${group.silence.actor || group.silence.by}`}
            </dd>
          </>
        )}
        {group.ack?.ackTime && (
          <>
            <dt>Acknowledged</dt>
            <dd>
              {when(group.ack.ackTime)} by {group.ack.by || group.ack.actor}
            </dd>
          </>
        )}
        {group.externalUrl && (
          <>
            <dt>Alertmanager</dt>
            <dd>
              <a href={group.externalUrl} rel="noopener noreferrer" target="_blank">
                {group.externalUrl}
              </a>
            </dd>
          </>
        )}
      </dl>
      <h2>Alerts</h2>
      {(group.alerts ?? []).length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="rows" id="group-alerts">
          {group.alerts!.map((a) => (
            <li key={a.id}>
              <Link href={`/console/alerts/${a.id}`}>
                <Chip value={a.status} /> <span class="row-title">{(a.text ?? "").split("\n")[0]}</span>
                <span class="muted">
                  {a.alertStatus || "—"} · {when(a.receivedAt)}
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
