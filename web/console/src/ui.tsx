// Small shared pieces of the console's pages.
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { ApiError } from "./api/client";

/** navigate moves to a console path without a reload. */
export function navigate(path: string) {
  history.pushState(null, "", path);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** Link is an anchor the router handles. */
export function Link(props: { href: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-current={props.current ? "page" : undefined}
      onClick={(e) => {
        if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

/** ErrorBox shows an API error; field violations are shown by their fields too. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : new ApiError(0, String(error));
  return (
    <div class="error" role="alert">
      <strong>{e.httpStatus === 400 ? "Please correct the request" : "Request failed"}</strong>: {e.message}
      {e.violations.length > 0 && (
        <ul>
          {e.violations.map((v) => (
            <li key={v.field}>
              <code>{v.field}</code>: {v.description}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

let fieldSeq = 0;

/** Field is a labelled input with its violation (from error) shown beside it. */
export function Field(props: {
  label: string;
  name: string;
  error?: unknown;
  hint?: string;
  children: (id: string, invalid: boolean, describedBy: string | undefined) => ComponentChildren;
}) {
  const id = useRef(`f${++fieldSeq}`).current;
  const msg = props.error instanceof ApiError ? props.error.forField(props.name) : undefined;
  const describedBy = [msg ? `${id}-err` : "", props.hint ? `${id}-hint` : ""].filter(Boolean).join(" ") || undefined;
  return (
    <div class={"field" + (msg ? " invalid" : "")}>
      <label for={id}>{props.label}</label>
      {props.children(id, !!msg, describedBy)}
      {props.hint && (
        <small id={`${id}-hint`} class="hint">
          {props.hint}
        </small>
      )}
      {msg && (
        <small id={`${id}-err`} class="violation" data-field={props.name}>
          {msg}
        </small>
      )}
    </div>
  );
}

/** Empty says there is nothing yet and what to do about it. */
export function Empty({ title, children }: { title: string; children?: ComponentChildren }) {
  return (
    <div class="empty">
      <p>
        <strong>{title}</strong>
      </p>
      {children}
    </div>
  );
}

/** Chip is a status label, coloured by its value. */
export function Chip({ value }: { value?: string }) {
  const v = value ?? "UNKNOWN";
  return <span class={`chip chip-${v.toLowerCase()}`}>{v.replace(/_/g, " ")}</span>;
}

/** when formats a timestamp for people, or "—". */
export function when(ts?: string): string {
  if (!ts) return "—";
  const d = new Date(ts);
  return isNaN(d.getTime()) ? ts : d.toLocaleString();
}

/** useNow re-renders every interval ms and returns the current time. */
export function useNow(interval = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), interval);
    return () => clearInterval(t);
  }, [interval]);
  return now;
}

/** Loading is the placeholder while a page's first call runs. */
export function Loading() {
  return (
    <p class="muted" aria-live="polite">
      Loading…
    </p>
  );
}
