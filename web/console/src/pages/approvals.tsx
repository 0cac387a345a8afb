// /console/approvals: pending approvals with a live countdown to
// escalation, their risk and description, approve/reject with the
// decider's name; decided and escalated history below.
import { useState } from "preact/hooks";
import { api, call, type Approval, type Schemas } from "../api/client";
import { useLive } from "../live";
import { Chip, Empty, ErrorBox, Field, Link, Loading, useNow, when } from "../ui";

type Status = Schemas["v1ApprovalRequestStatus"];

/** countdown formats the time left until ts, e.g. "4:59", or "due". */
export function countdown(ts: string | undefined, now: number): string {
  if (!ts) return "—";
  const left = Math.floor((new Date(ts).getTime() - now) / 1000);
  if (left <= 0) return "due";
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}

/** decider says who ended an approval, or why it ended without a person. */
function decider(a: Approval): string {
  const d = a.decision;
  const who = d?.approvedBy || d?.rejectedBy;
  if (!who) return d?.reason ?? "";
  // The authenticated key's name decides; the typed name is a note.
  return d?.decidedBy && d.decidedBy !== who ? `by ${who} (${d.decidedBy})` : `by ${who}`;
}

function useApprovals(status: Status) {
  const [list, setList] = useState<Approval[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [tick, setTick] = useState(0);
  useLive(
    async (signal) => {
      try {
        const r = await call(api.GET("/v1/approvals", { params: { query: { status, pageSize: 100 } }, signal }));
        setList(r.approvals ?? []);
        setError(null);
        return r.approvals?.map((a) => [a.id, a.status]);
      } catch (e) {
        setError(e);
        throw e;
      }
    },
    [status, tick],
  );
  return { list, error, reload: () => setTick((t) => t + 1) };
}

export function ApprovalsPage() {
  const pending = useApprovals("PENDING");
  const [historyStatus, setHistoryStatus] = useState<Status>("APPROVED");
  const history = useApprovals(historyStatus);
  const [name, setName] = useState(localStorage.getItem("groundcrew.name") ?? "");
  const [comment, setComment] = useState("");
  const [decideError, setDecideError] = useState<unknown>(null);
  const now = useNow();

  const decide = async (a: Approval, decision: "APPROVE" | "REJECT") => {
    localStorage.setItem("groundcrew.name", name);
    try {
      await call(
        api.POST("/v1/approvals/{id}:decide", {
          params: { path: { id: a.id ?? "" } },
          body: { decision, decidedBy: name, comment },
        }),
      );
      setDecideError(null);
      setComment("");
      pending.reload();
      history.reload();
    } catch (e) {
      setDecideError(e);
    }
  };

  return (
    <section aria-labelledby="h-approvals">
      <h1 id="h-approvals">Approvals</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Decider">
        <Field label="Your name (recorded with the decision)" name="decided_by" error={decideError}>
          {(id, inv, d) => (
            <input id={id} aria-invalid={inv} aria-describedby={d} value={name} onInput={(e) => setName(e.currentTarget.value)} />
          )}
        </Field>
        <Field label="Comment" name="comment" error={decideError}>
          {(id, inv, d) => (
            <input id={id} aria-invalid={inv} aria-describedby={d} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
          )}
        </Field>
      </form>
      <ErrorBox error={decideError ?? pending.error} />
      <h2>Pending</h2>
      {pending.list === null ? (
        <Loading />
      ) : pending.list.length === 0 ? (
        <Empty title="Nothing waits for a decision.">
          <p>Research runs that plan a risky action ask here; unanswered requests escalate after 5 minutes.</p>
        </Empty>
      ) : (
        <ul class="cards" id="pending-approvals">
          {pending.list.map((a) => (
            <li key={a.id} class="card" data-approval-id={a.id}>
              <p>
                <strong>{a.actionType}</strong> <Chip value={a.riskLevel} />
              </p>
              <p>{a.description}</p>
              <p class="muted">
                Run <Link href={`/console/research/${a.runId}`}>{a.runId}</Link> · requested {when(a.requestedAt)}
              </p>
              <p>
                Escalates in{" "}
                <strong class="countdown" aria-live="off" role="timer">
                  {countdown(a.timeoutAt, now)}
                </strong>
              </p>
              <div class="actions">
                <button type="button" onClick={() => decide(a, "APPROVE")}>
                  Approve
                </button>
                <button type="button" class="danger" onClick={() => decide(a, "REJECT")}>
                  Reject
                </button>
              </div>
            </li>
          ))}
        </ul>
      )}
      <h2>History</h2>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="History filter">
        <Field label="Decided as" name="history">
          {(id) => (
            <select id={id} value={historyStatus} onChange={(e) => setHistoryStatus(e.currentTarget.value as Status)}>
              {(["APPROVED", "REJECTED", "ESCALATED"] as const).map((s) => (
                <option value={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
      </form>
      {history.list === null ? (
        <Loading />
      ) : history.list.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul class="rows">
          {history.list.map((a) => (
            <li key={a.id}>
              <div>
                <Chip value={a.status} /> <span class="row-title">{a.actionType}</span>{" "}
                <span class="muted">
                  {decider(a)} · run {a.runId}
                </span>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
