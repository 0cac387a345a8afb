// The groundcrew operator console: a small Preact app served by the gateway
// at /console/, talking to the API only through the generated client.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, apiKey, call, onUnauthorized } from "./api/client";
import { AlertDetail, AlertsPage } from "./pages/alerts";
import { ApprovalsPage } from "./pages/approvals";
import { AskPage } from "./pages/ask";
import { GroupDetail } from "./pages/group";
import { MessageDetail, MessagesPage } from "./pages/messages";
import { OnCallPage } from "./pages/oncall";
import { ResearchDetail, ResearchPage } from "./pages/research";
import { SearchPage } from "./pages/search";
import "./style.css";
import { ErrorBox, Link } from "./ui";

const pages = [
  ["alerts", "Alerts"],
  ["messages", "Answers"],
  ["approvals", "Approvals"],
  ["oncall", "On call"],
  ["ask", "Ask"],
  ["research", "Research"],
  ["search", "Search"],
] as const;

function route(path: string) {
  const [, page = "alerts", id] = path.replace(/^\/console\/?/, "/").split("/");
  switch (page || "alerts") {
    case "alerts":
      return id ? <AlertDetail id={id} /> : <AlertsPage />;
    case "groups":
      // A group's own page; the list of groups is on the alerts page.
      return id ? <GroupDetail id={id} /> : <AlertsPage />;
    case "messages":
      return id ? <MessageDetail id={id} /> : <MessagesPage />;
    case "approvals":
      return <ApprovalsPage />;
    case "oncall":
      return <OnCallPage />;
    case "ask":
      return <AskPage />;
    case "research":
      return id ? <ResearchDetail id={id} /> : <ResearchPage />;
    case "search":
      return <SearchPage />;
    default:
      return (
        <section>
          <h1>Not found</h1>
          <p>
            There is no console page at <code>{path}</code>.
          </p>
        </section>
      );
  }
}

function SignIn({ onDone }: { onDone: () => void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    apiKey.set(key.trim());
    try {
      await call(api.GET("/v1/alerts", { params: { query: { pageSize: 1 } } }));
      onDone();
    } catch (err) {
      apiKey.clear();
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="signin">
      <h1>Sign in</h1>
      <p>This gateway needs an API key (one of GATEWAY_API_KEYS). It is kept for this tab only.</p>
      <form onSubmit={submit} class="stack" aria-label="Sign in">
        <div class="field">
          <label for="api-key">API key</label>
          <input id="api-key" type="password" autoComplete="current-password" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        </div>
        <ErrorBox error={error} />
        <div class="actions">
          <button type="submit" disabled={busy || !key.trim()}>
            Sign in
          </button>
        </div>
      </form>
    </main>
  );
}

function App() {
  const [path, setPath] = useState(location.pathname);
  const [signIn, setSignIn] = useState(false);
  const [gen, setGen] = useState(0);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    addEventListener("popstate", onPop);
    const off = onUnauthorized(() => {
      apiKey.clear();
      setSignIn(true);
    });
    return () => {
      removeEventListener("popstate", onPop);
      off();
    };
  }, []);
  useEffect(() => {
    const page = pages.find(([p]) => path.startsWith(`/console/${p}`))?.[1] ?? "Alerts";
    document.title = `${page} · groundcrew`;
    document.getElementById("main")?.focus();
  }, [path]);
  if (signIn)
    return (
      <SignIn
        onDone={() => {
          setSignIn(false);
          setGen((g) => g + 1);
        }}
      />
    );
  const current = pages.find(([p]) => path.startsWith(`/console/${p}`))?.[0] ?? "alerts";
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header>
        <span class="brand">groundcrew</span>
        <nav aria-label="Console">
          {pages.map(([p, label]) => (
            <Link href={`/console/${p}`} current={p === current}>
              {label}
            </Link>
          ))}
        </nav>
        {apiKey.get() && (
          <button
            type="button"
            class="link"
            onClick={() => {
              apiKey.clear();
              setSignIn(true);
            }}
          >
            Sign out
          </button>
        )}
      </header>
      <main id="main" tabIndex={-1} key={`${path}#${gen}`}>
        {route(path)}
      </main>
    </>
  );
}

render(<App />, document.getElementById("app")!);
