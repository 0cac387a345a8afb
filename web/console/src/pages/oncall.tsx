// /console/oncall: who is on call now on every schedule, the next hand-off,
// the next 7 days of shifts, and the escalation policies that page them.
import { useEffect, useState } from "preact/hooks";
import { api, call, type Schemas } from "../api/client";
import { ErrorBox, Loading, when } from "../ui";

type Schedule = Schemas["v1Schedule"];
type Shift = Schemas["v1Shift"];
type Participant = Schemas["v1Participant"];
type Policy = Schemas["v1EscalationPolicy"];

/** who names a person as the chat does: @username, else the name, else the id. */
export function who(p?: Participant): string {
  if (!p) return "nobody";
  if (p.username) return `@${p.username}`;
  if (p.name) return p.name;
  return `user ${p.userId ?? "?"}`;
}

function ScheduleCard({ schedule }: { schedule: Schedule }) {
  const id = schedule.id!;
  const [now, setNow] = useState<Schemas["v1GetOnCallResponse"] | null>(null);
  const [shifts, setShifts] = useState<Shift[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ctl = new AbortController();
    Promise.all([
      call(api.GET("/v1/oncall/schedules/{id}/oncall", { params: { path: { id } }, signal: ctl.signal })),
      call(api.GET("/v1/oncall/schedules/{id}/shifts", { params: { path: { id } }, signal: ctl.signal })),
    ])
      .then(([n, s]) => {
        setNow(n);
        setShifts(s.shifts ?? []);
      })
      .catch((e) => ctl.signal.aborted || setError(e));
    return () => ctl.abort();
  }, [id]);
  return (
    <article class="card" aria-labelledby={`h-s-${id}`}>
      <h2 id={`h-s-${id}`}>{schedule.name || id}</h2>
      <ErrorBox error={error} />
      {now === null ? (
        !error && <Loading />
      ) : (
        <dl class="facts">
          <dt>On call now</dt>
          <dd class="oncall-now">
            <strong>{now.current ? who(now.current.participant) : "nobody"}</strong>
            {now.current && (
              <span class="muted">
                {" "}
                ({now.current.override ? "override" : now.current.layer}) until {when(now.current.endTime)}
              </span>
            )}
          </dd>
          <dt>Next hand-off</dt>
          <dd>{now.next ? `${who(now.next.participant)} at ${when(now.next.startTime)}` : "—"}</dd>
          <dt>Time zone</dt>
          <dd>{schedule.timeZone || "UTC"}</dd>
          <dt>Calendar</dt>
          <dd>
            <a href={`/v1/oncall/schedules/${encodeURIComponent(id)}/calendar.ics`}>calendar.ics</a>
          </dd>
        </dl>
      )}
      {shifts && shifts.length > 0 && (
        <table class="shifts">
          <caption>The next 7 days</caption>
          <thead>
            <tr>
              <th scope="col">From</th>
              <th scope="col">To</th>
              <th scope="col">Who</th>
              <th scope="col">Layer</th>
            </tr>
          </thead>
          <tbody>
            {shifts.map((s) => (
              <tr key={`${s.startTime}-${who(s.participant)}`}>
                <td>{when(s.startTime)}</td>
                <td>{when(s.endTime)}</td>
                <td>{who(s.participant)}</td>
                <td>{s.override ? "override" : s.layer}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </article>
  );
}

export function OnCallPage() {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [policies, setPolicies] = useState<Policy[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    const ctl = new AbortController();
    Promise.all([
      call(api.GET("/v1/oncall/schedules", { signal: ctl.signal })),
      call(api.GET("/v1/oncall/policies", { signal: ctl.signal })),
    ])
      .then(([s, p]) => {
        setSchedules(s.schedules ?? []);
        setPolicies(p.policies ?? []);
      })
      .catch((e) => ctl.signal.aborted || setError(e));
    return () => ctl.abort();
  }, []);
  return (
    <section aria-labelledby="h-oncall">
      <h1 id="h-oncall">On call</h1>
      <ErrorBox error={error} />
      {schedules === null ? (
        !error && <Loading />
      ) : schedules.length === 0 ? (
        <p class="muted">
          No schedules yet: load them from <code>NOTIFIER_ONCALL_FILE</code> or <code>PUT /v1/oncall/schedules/&#123;id&#125;</code>.
        </p>
      ) : (
        schedules.map((s) => <ScheduleCard key={s.id} schedule={s} />)
      )}
      <h2>Escalation policies</h2>
      {policies.length === 0 ? (
        <p class="muted">None: alert groups do not escalate.</p>
      ) : (
        <ul class="rows" id="policies">
          {policies.map((p) => (
            <li key={p.id}>
              <strong>{p.name || p.id}</strong>{" "}
              <span class="muted">
                {p.default ? "default" : p.match ? `for ${p.match}` : "matches nothing"}
                {" · "}
                {(p.steps ?? [])
                  .map((st, i) => `${i + 1}. ${st.scheduleId ? `on call of ${st.scheduleId}` : ""}${st.scheduleId && st.users?.length ? " + " : ""}${(st.users ?? []).map(who).join(", ")}, wait ${st.waitMinutes} min`)
                  .join(" → ")}
                {p.repeat ? ` · repeated ${p.repeat}×` : ""}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
