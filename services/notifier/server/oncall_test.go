package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/notifier/telegramtest"
)

// The people of the on-call tests: ann is on call, ben is the second step,
// cat never started a chat with the bot.
const (
	annID = 501
	benID = 502
	catID = 503
)

// oncallFile writes a schedule with ann (or cat) on call and a policy for
// team=db: the schedule's on-call, then ben, then cat, each step waiting
// one "minute" (NOTIFIER_ONCALL_WAIT_UNIT in these tests).
func oncallFile(t *testing.T, primary string) string {
	t.Helper()
	doc := `schedules:
  - id: db-primary
    time_zone: Europe/Berlin
    layers:
      - name: weekly
        participants: [` + primary + `]
        rotation: {length: WEEKLY, start_date: "2026-01-05", handoff_time: "10:00"}
policies:
  - id: database
    match: team=db
    steps:
      - {schedule_id: db-primary, wait_minutes: 1}
      - users: [{user_id: 502, username: ben_oncall}]
        wait_minutes: 1
      - users: [{user_id: 503, name: Cat}]
        wait_minutes: 1
`
	path := filepath.Join(t.TempDir(), "oncall.yaml")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func dbDown(key string) *notifierv1.IngestAlertmanagerRequest {
	req := crashLooping(key, 1, "firing")
	req.GroupLabels = map[string]string{"alertname": "PostgresDown"}
	req.CommonLabels = map[string]string{"alertname": "PostgresDown", "team": "db", "severity": "critical"}
	req.Alerts[0].Labels = map[string]string{"alertname": "PostgresDown", "team": "db", "severity": "critical", "instance": "db-1"}
	return req
}

// sentTo returns what the bot sent to chat.
func sentTo(tg *telegramtest.Server, chat int64) []telegramtest.Sent {
	var out []telegramtest.Sent
	for _, s := range tg.Sent() {
		if s.ChatID == strconv.FormatInt(chat, 10) {
			out = append(out, s)
		}
	}
	return out
}

// TestEscalationInTelegram: a group for team=db fires; ann (on call) is
// mentioned in the alert chat under the root and messaged directly;
// nobody acks, so ben is notified one step later; ben's Ack from his
// direct message stops the escalation and edits the root; cat, the third
// step, is never paged.
func TestEscalationInTelegram(t *testing.T) {
	const unit = 400 * time.Millisecond
	e := startSecured(t, map[string]string{
		"NOTIFIER_ONCALL_FILE":      oncallFile(t, `{user_id: 501, username: ann_oncall}`),
		"NOTIFIER_ONCALL_WAIT_UNIT": unit.String(),
	})
	ctx := t.Context()
	res, err := e.c.IngestAlertmanager(ctx, dbDown(`{}:{alertname="PostgresDown"}`))
	if err != nil {
		t.Fatal(err)
	}
	gid := res.GetAlerts()[0].GetGroupId()
	g := waitGroupDelivered(t, e.c, gid, 1)
	root, _ := strconv.ParseInt(g.GetRootMessageId(), 10, 64)

	// Step 1: ann, in the chat (replying to the root) and directly.
	waitfor.Cond(t, "ann's direct page", func() bool { return len(sentTo(e.tg, annID)) == 1 })
	var mention telegramtest.Sent
	for _, s := range sentTo(e.tg, alertsChat) {
		if strings.Contains(s.Text, "ann") {
			mention = s
		}
	}
	if !strings.Contains(mention.Text, `@ann\_oncall`) || int64(mention.ReplyParameters["message_id"].(float64)) != root {
		t.Fatalf("step 1 mention %+v, want @ann_oncall replying to root %d", mention, root)
	}
	page := sentTo(e.tg, annID)[0]
	if !strings.Contains(plain(t, page.Text), "PostgresDown needs an acknowledgement (step 1 of 3)") || buttonData(t, page.ReplyMarkup)["👀 Ack"] != "esc:"+gid {
		t.Fatalf("ann's page %q with buttons %v", page.Text, buttonData(t, page.ReplyMarkup))
	}
	start := time.Now()
	rootEdited := func(want string) func() bool {
		return func() bool {
			for _, c := range e.tg.Calls("editMessageText") {
				if strings.Contains(plain(t, c.Form["text"]), want) {
					return true
				}
			}
			return false
		}
	}
	waitfor.Cond(t, "the root to show step 1", rootEdited("⏳ escalating: step 1 of 3, @ann_oncall notified"))

	// Step 2 about one unit later: ben.
	waitfor.Cond(t, "ben's direct page", func() bool { return len(sentTo(e.tg, benID)) == 1 })
	if took := time.Since(start); took > unit+10*time.Second {
		t.Errorf("step 2 came %s after step 1, due after %s", took, unit)
	}
	benPage := sentTo(e.tg, benID)[0]

	// Ann pressing ben's button from her own chat is refused; ben's counts.
	mallory := &notifierv1.TelegramUser{Id: 666, FirstName: "Mallory", Username: "mallory_x"}
	ben := &notifierv1.TelegramUser{Id: benID, FirstName: "Ben", Username: "ben_oncall"}
	if out, err := e.post(t, secSecret, callbackIn(40, mallory, "esc:"+gid, 666, 1)); err != nil || out != "refused" {
		t.Fatalf("someone never paged pressed Ack: %q, %v", out, err)
	}
	if out, err := e.post(t, secSecret, callbackIn(41, ben, "esc:"+gid, benID, benPage.MessageID)); err != nil || out != "decided" {
		t.Fatalf("ben's Ack: %q, %v", out, err)
	}
	esc, err := oncallClient(t, e).GetEscalation(ctx, &notifierv1.GetEscalationRequest{GroupId: gid})
	if err != nil {
		t.Fatal(err)
	}
	if esc.GetEscalation().GetState() != notifierv1.Escalation_ACKNOWLEDGED {
		t.Fatalf("escalation %v, want ACKNOWLEDGED", esc.GetEscalation())
	}
	var kinds []string
	for _, ev := range esc.GetEscalation().GetTimeline() {
		kinds = append(kinds, ev.GetKind().String()+"/"+ev.GetChannel()+"/"+ev.GetParticipant().GetUsername())
	}
	want := "STARTED//,NOTIFIED/chat/ann_oncall,NOTIFIED/direct/ann_oncall,NOTIFIED/chat/ben_oncall,NOTIFIED/direct/ben_oncall,ACKNOWLEDGED//"
	if got := strings.Join(kinds, ","); got != want {
		t.Errorf("timeline\n got %s\nwant %s", got, want)
	}
	waitfor.Cond(t, "the root to show the ack and how long it took", rootEdited("👀 acked by @ben_oncall after "))
	// Cat, the third step, was due one unit after ben: never paged. (A
	// negative check: due jobs are made available every second, so wait
	// a few past the step's due time.)
	time.Sleep(unit + 3*time.Second)
	if got := sentTo(e.tg, catID); len(got) != 0 {
		t.Errorf("cat was paged after the ack: %+v", got)
	}
}

// TestEscalationToSomeoneWhoNeverStartedTheBot: the direct message fails
// (Telegram's 403) and is recorded; the chat mention still goes out, by id
// for a person without a username.
func TestEscalationToSomeoneWhoNeverStartedTheBot(t *testing.T) {
	e := startSecured(t, map[string]string{
		"NOTIFIER_ONCALL_FILE":      oncallFile(t, `{user_id: 503, name: Cat}`),
		"NOTIFIER_ONCALL_WAIT_UNIT": "30s",
	})
	e.tg.Handle(func(s telegramtest.Sent) telegramtest.Reply {
		if s.ChatID == strconv.Itoa(catID) {
			return telegramtest.Reply{ErrorCode: 403, Description: "Forbidden: bot can't initiate conversation with a user"}
		}
		return telegramtest.Reply{}
	})
	ctx := t.Context()
	res, err := e.c.IngestAlertmanager(ctx, dbDown(`{}:{alertname="PostgresDown",n="2"}`))
	if err != nil {
		t.Fatal(err)
	}
	gid := res.GetAlerts()[0].GetGroupId()
	waitGroupDelivered(t, e.c, gid, 1)
	var timeline []*notifierv1.EscalationEvent
	waitfor.Cond(t, "step 1 recorded", func() bool {
		esc, err := oncallClient(t, e).GetEscalation(ctx, &notifierv1.GetEscalationRequest{GroupId: gid})
		if status.Code(err) == codes.NotFound {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		timeline = esc.GetEscalation().GetTimeline()
		return len(timeline) >= 3
	})
	if ev := timeline[1]; ev.GetKind() != notifierv1.EscalationEvent_NOTIFIED || ev.GetChannel() != "chat" {
		t.Errorf("event 1 %v, want the chat mention", ev)
	}
	if ev := timeline[2]; ev.GetKind() != notifierv1.EscalationEvent_NOTIFY_FAILED || ev.GetChannel() != "direct" || !strings.Contains(ev.GetDetail(), "initiate conversation") {
		t.Errorf("event 2 %v, want the failed direct message with Telegram's reason", ev)
	}
	var mention string
	for _, s := range sentTo(e.tg, alertsChat) {
		if strings.Contains(s.Text, "tg://user?id=503") {
			mention = s.Text
		}
	}
	if mention == "" {
		t.Errorf("no mention of Cat by id in the chat: %+v", sentTo(e.tg, alertsChat))
	}

	// A group no policy takes has no escalation: an empty answer, not an error.
	req := crashLooping(`{}:{alertname="KubePodCrashLooping"}`, 1, "firing")
	req.Alerts[0].Fingerprint = "00000000000000ff" // not the PostgresDown alert's
	other, err := e.c.IngestAlertmanager(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	otherID := other.GetAlerts()[0].GetGroupId()
	waitGroupDelivered(t, e.c, otherID, 1)
	esc, err := oncallClient(t, e).GetEscalation(ctx, &notifierv1.GetEscalationRequest{GroupId: otherID})
	if err != nil || esc.GetEscalation() != nil {
		t.Errorf("escalation of a group no policy took = %v, %v; want none, no error", esc, err)
	}
}

func oncallClient(t *testing.T, e secEnv) notifierv1.OnCallServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(e.n.grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return notifierv1.NewOnCallServiceClient(conn)
}

// callbackIn is a button press in chatID (a private chat when it is the
// presser's id).
func callbackIn(updateID int64, from *notifierv1.TelegramUser, data string, chatID, messageID int64) *notifierv1.TelegramUpdate {
	typ := "private"
	if chatID < 0 {
		typ = "supergroup"
	}
	return &notifierv1.TelegramUpdate{UpdateId: updateID, CallbackQuery: &notifierv1.TelegramCallbackQuery{
		Id: "cbq-" + strconv.FormatInt(updateID, 10), From: from, Data: data, ChatInstance: "-5" + strconv.FormatInt(chatID, 10),
		Message: &notifierv1.TelegramChatMessage{MessageId: messageID, Text: "page",
			Chat: &notifierv1.TelegramChat{Id: chatID, Type: typ}},
	}}
}

// TestEscalationSurvivesKill kills the notifier with SIGKILL right after
// step 1 paged ann, restarts it on the same database, and checks that step
// 2 pages ben within 10 s of its due time and that nobody is paged twice.
func TestEscalationSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the notifier binary")
	}
	bin := buildNotifier(t)
	tg := telegramtest.NewServer(t.Cleanup)
	const unit = 8 * time.Second
	env := []string{
		"DATA_DIR=" + t.TempDir(),
		"DATABASE_URL=" + sqlstoretest.URL(t, "notifier_oncall_kill"),
		"LOG_FORMAT=json",
		"LOG_LEVEL=info",
		"NOTIFIER_LISTEN_ADDR=127.0.0.1:0",
		"NOTIFIER_ADMIN_ADDR=127.0.0.1:0",
		"GROUNDING_ADDR=" + startGrounding(t, 0),
		"TELEGRAM_BOT_TOKEN=7100000001:AAE-oncall-kill-test",
		"TELEGRAM_WEBHOOK_SECRET=oncall-kill-secret",
		"TELEGRAM_API_URL=" + tg.URL,
		"TELEGRAM_CHAT_ID=" + strconv.Itoa(alertsChat),
		"TELEGRAM_BOT_USERNAME=groundcrew_bot",
		"NOTIFIER_POLL_INTERVAL=50ms",
		"GRACE_PERIOD=1s",
		"NOTIFIER_ONCALL_FILE=" + oncallFile(t, `{user_id: 501, username: ann_oncall}`),
		"NOTIFIER_ONCALL_WAIT_UNIT=" + unit.String(),
	}
	if sqlstoretest.OnPostgres() {
		env = append(env, "NOTIFIER_ENRICH_TIMEOUT=1s", "NOTIFIER_JOB_TIMEOUT=11s", "NOTIFIER_RESCUE_AFTER=12s")
	}
	first := start(t, bin, env)
	if _, err := dial(t, first.addr).IngestAlertmanager(t.Context(), dbDown(`{}:{alertname="PostgresDown",kill="1"}`)); err != nil {
		t.Fatal(err)
	}
	waitfor.Cond(t, "ann's page", func() bool { return len(sentTo(tg, annID)) == 1 })
	paged := time.Now()
	first.kill(t)

	second := start(t, bin, env)
	deadline := paged.Add(unit + 30*time.Second)
	for len(sentTo(tg, benID)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("step 2 never came after the restart:\n%s", second.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	late := time.Since(paged) - unit
	t.Logf("step 2 came %s after its due time, across a kill -9", late.Round(time.Millisecond))
	if late < -time.Second || late > 10*time.Second {
		t.Errorf("step 2 came %s from its due time, want within 10 s", late)
	}
	if n := len(sentTo(tg, annID)); n != 1 {
		t.Errorf("ann was paged directly %d times, want once", n)
	}
	if n := len(sentTo(tg, benID)); n != 1 {
		t.Errorf("ben was paged directly %d times, want once", n)
	}
}

// TestEscalationTwoInstancesOnePostgres runs two notifiers on one
// PostgreSQL database, both loading the same policy, with groups posted to
// either: every step of every group pages its person once, not once per
// instance.
func TestEscalationTwoInstancesOnePostgres(t *testing.T) {
	dbURL := sqlstoretest.PostgresURL(t, "notifier_oncall_shared")
	tg := telegramtest.NewServer(t.Cleanup)
	grounding := startGrounding(t, 0)
	file := oncallFile(t, `{user_id: 501, username: ann_oncall}`)
	startInstance := func() running {
		return runNotifier(t, map[string]string{
			"DATA_DIR":                  t.TempDir(),
			"DATABASE_URL":              dbURL,
			"NOTIFIER_LISTEN_ADDR":      "127.0.0.1:0",
			"NOTIFIER_ADMIN_ADDR":       "127.0.0.1:0",
			"GROUNDING_ADDR":            grounding,
			"TELEGRAM_BOT_TOKEN":        "7100000001:AAE-oncall-shared",
			"TELEGRAM_WEBHOOK_SECRET":   "oncall-shared-secret",
			"TELEGRAM_API_URL":          tg.URL,
			"TELEGRAM_CHAT_ID":          strconv.Itoa(alertsChat),
			"TELEGRAM_BOT_USERNAME":     "groundcrew_bot",
			"NOTIFIER_POLL_INTERVAL":    "20ms",
			"GRACE_PERIOD":              "2s",
			"NOTIFIER_ONCALL_FILE":      file,
			"NOTIFIER_ONCALL_WAIT_UNIT": "300ms",
		})
	}
	a, b := startInstance(), startInstance()
	clients := []notifierv1.NotifierServiceClient{dial(t, a.grpcAddr), dial(t, b.grpcAddr)}
	const groups = 4
	for i := range groups {
		req := dbDown(fmt.Sprintf(`{}:{alertname="PostgresDown",cluster="c%d"}`, i))
		req.Alerts[0].Fingerprint = fmt.Sprintf("%016x", 0x100+i)
		if _, err := clients[i%2].IngestAlertmanager(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	// Three steps each: ann, ben, then cat; nobody acks. A step's pages
	// wait for the chat's pacing after its position advanced, so a later
	// step can land first: wait for every person's pages, not cat's.
	waitfor.Within(t, time.Minute, "every group's three steps", tg.Changed(), func() bool {
		return len(sentTo(tg, annID)) >= groups && len(sentTo(tg, benID)) >= groups && len(sentTo(tg, catID)) >= groups
	})
	time.Sleep(2 * time.Second) // a second instance's duplicate would land by now
	for who, id := range map[string]int64{"ann": annID, "ben": benID, "cat": catID} {
		if n := len(sentTo(tg, id)); n != groups {
			t.Errorf("%s was paged directly %d times for %d groups, want once each", who, n, groups)
		}
	}
}
