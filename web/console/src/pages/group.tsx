// /console/groups/{id}: one alert group (an Alertmanager or Grafana group
// notification) with its alerts, its enrichment, silence and
// acknowledgement; re-read while it can still change.
import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api/client";
import { useLive } from "../live";
import { ApiError } from "../api/client";
import { Chip, ErrorBox, Link, Loading, when } from "../ui";
import { who } from "./oncall";

type Group = Schemas["v1AlertGroup"];
type Escalation = Schemas["v1Escalation"];

const eventText: Record<string, string> = {
  STARTED: "escalation started",
  NOTIFIED: "notified",
  NOTIFY_FAILED: "could not notify",
  ACKNOWLEDGED: "acknowledged",
  STOPPED: "stopped",
};

/** EscalationTimeline shows who was paged when, by which step and channel. */
function EscalationTimeline({ esc }: { esc: Escalation }) {
  return (
    <>
      <h2 id="h-escalation">
        Escalation <Chip value={esc.state} />
      </h2>
      <p class="muted">
        policy {esc.policyId}
        {esc.state === "ESCALATING" && esc.nextStepTime && ` · step ${esc.step} due ${when(esc.nextStepTime)}`}
      </p>
      <ol class="timeline" id="escalation-timeline">
        {(esc.timeline ?? []).map((ev, i) => (
          <li key={i} class={ev.kind === "NOTIFY_FAILED" ? "bad" : undefined}>
            <span class="muted">{when(ev.time)}</span> {eventText[ev.kind ?? ""] ?? ev.kind}
            {ev.participant && ` ${who(ev.participant)}`}
            {ev.step ? ` · step ${ev.step}${ev.round && ev.round > 1 ? `, round ${ev.round}` : ""}` : ""}
            {ev.channel && ` · ${ev.channel === "direct" ? "direct message" : "in the chat"}`}
            {ev.detail && <span class="muted"> — {ev.detail}</span>}
          </li>
        ))}
      </ol>
    </>
  );
}

export function GroupDetail({ id }: { id: string }) {
  const [group, setGroup] = useState<Group | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [esc, setEsc] = useState<Escalation | null>(null);
  useLive(
    async (signal) => {
      try {
        const r = await call(api.GET("/v1/alert-groups/{id}", { params: { path: { id } }, signal }));
        setGroup(r.alertGroup ?? null);
        setError(null);
        const g = r.alertGroup;
        // A group no policy took has no escalation (404): nothing to show.
        const e = await call(api.GET("/v1/alert-groups/{groupId}/escalation", { params: { path: { groupId: id } }, signal }))
          .then((x) => x.escalation ?? null)
          .catch((err) => {
            if (err instanceof ApiError && err.httpStatus === 404) return null;
            throw err;
          });
        setEsc(e);
        return [g?.status, g?.updateTime, g?.alerts?.map((a) => [a.id, a.status]), e?.state, e?.timeline?.length];
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
      {esc && <EscalationTimeline esc={esc} />}
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
