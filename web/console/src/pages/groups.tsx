// Alert groups (Alertmanager and Grafana group notifications) with the
// actions the chat buttons have: silence (needs ALERTMANAGER_URL at the
// notifier) and acknowledge.
import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api/client";
import { useLive } from "../live";
import { Chip, ErrorBox, Field, Link, when } from "../ui";

type Group = Schemas["v1AlertGroup"];

const durations: [string, string][] = [
  ["3600s", "1 hour"],
  ["14400s", "4 hours"],
  ["86400s", "1 day"],
  ["604800s", "1 week"],
];

export function AlertGroups() {
  const [groups, setGroups] = useState<Group[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [duration, setDuration] = useState("3600s");
  const [tick, setTick] = useState(0);
  useLive(
    async (signal) => {
      try {
        const r = await call(api.GET("/v1/alert-groups", { params: { query: { pageSize: 20 } }, signal }));
        setGroups(r.alertGroups ?? []);
        setError(null);
        return r.alertGroups?.map((g) => [g.id, g.status, g.updateTime]);
      } catch (e) {
        setError(e);
        throw e;
      }
    },
    [tick],
  );
  const by = () => localStorage.getItem("groundcrew.name") ?? "";
  const act = async (g: Group, kind: "silence" | "ack") => {
    try {
      if (kind === "silence") {
        await call(api.POST("/v1/alert-groups/{id}:silence", { params: { path: { id: g.id ?? "" } }, body: { duration, by: by() } }));
      } else {
        await call(api.POST("/v1/alert-groups/{id}:ack", { params: { path: { id: g.id ?? "" } }, body: { by: by() } }));
      }
      setActionError(null);
      setTick((t) => t + 1);
    } catch (e) {
      setActionError(e);
    }
  };
  if (error || !groups || groups.length === 0) return null;
  return (
    <section aria-labelledby="h-groups">
      <h2 id="h-groups">Alert groups</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Silence length">
        <Field label="Silence for" name="duration" error={actionError}>
          {(id) => (
            <select id={id} value={duration} onChange={(e) => setDuration(e.currentTarget.value)}>
              {durations.map(([v, label]) => (
                <option value={v}>{label}</option>
              ))}
            </select>
          )}
        </Field>
      </form>
      <ErrorBox error={actionError} />
      <ul class="rows" id="alert-groups">
        {groups.map((g) => (
          <li key={g.id} data-group-id={g.id}>
            <div>
              <Chip value={g.status} />{" "}
              <Link href={`/console/groups/${g.id}`} class="row-title">
                {g.title || g.groupKey}
              </Link>
              <span class="muted">
                {g.firingCount ?? 0} firing · {g.resolvedCount ?? 0} resolved · {when(g.updateTime)}
                {g.silence && !g.silence.expired && ` · silenced until ${when(g.silence.endTime)}`}
                {g.ack?.ackTime && ` · acknowledged by ${g.ack.by || g.ack.actor}`}
              </span>
              <span class="actions">
                <button type="button" class="danger" onClick={() => act(g, "silence")}>
                  Silence
                </button>
                <button type="button" onClick={() => act(g, "ack")} disabled={!!g.ack?.ackTime}>
                  Acknowledge
                </button>
              </span>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}
