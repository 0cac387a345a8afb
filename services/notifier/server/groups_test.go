package server_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/waitfor"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

// crashLooping is an Alertmanager payload of n KubePodCrashLooping alerts
// in one group, all with status.
func crashLooping(key string, n int, status string) *notifierv1.IngestAlertmanagerRequest {
	req := &notifierv1.IngestAlertmanagerRequest{
		Version: "4", GroupKey: key, Status: status, Receiver: "groundcrew",
		GroupLabels:  map[string]string{"alertname": "KubePodCrashLooping"},
		CommonLabels: map[string]string{"alertname": "KubePodCrashLooping", "severity": "warning", "namespace": "shop"},
		ExternalUrl:  "http://alertmanager.example.com:9093",
	}
	for i := range n {
		req.Alerts = append(req.Alerts, &notifierv1.AlertmanagerAlert{
			Status:      status,
			Labels:      map[string]string{"alertname": "KubePodCrashLooping", "severity": "warning", "namespace": "shop", "pod": fmt.Sprintf("web-%d", i+1)},
			Annotations: map[string]string{"summary": fmt.Sprintf("Pod shop/web-%d is crash looping", i+1)},
			Fingerprint: fmt.Sprintf("%016x", i+1),
		})
	}
	return req
}

// waitGroupDelivered waits until every alert of a group is DELIVERED and
// returns the group.
func waitGroupDelivered(t *testing.T, c notifierv1.NotifierServiceClient, id string, alerts int) *notifierv1.AlertGroup {
	t.Helper()
	var g *notifierv1.AlertGroup
	waitfor.Cond(t, fmt.Sprintf("all %d alerts of group %s delivered", alerts, id), func() bool {
		res, err := c.GetAlertGroup(t.Context(), &notifierv1.GetAlertGroupRequest{Id: id})
		if err != nil {
			t.Fatal(err)
		}
		g = res.GetAlertGroup()
		delivered := 0
		for _, a := range g.GetAlerts() {
			if a.GetStatus() == notifierv1.Alert_DELIVERED {
				delivered++
			}
		}
		return delivered == alerts
	})
	return g
}

func plain(t *testing.T, text string) string {
	t.Helper()
	p, _, err := markdownv2.Parse(text)
	if err != nil {
		t.Fatalf("not valid MarkdownV2: %v\n%s", err, text)
	}
	return p
}

// buttonData returns the callback_data of reply_markup's buttons by label.
func buttonData(t *testing.T, markup string) map[string]string {
	t.Helper()
	out := map[string]string{}
	if markup == "" {
		return out
	}
	var m struct {
		InlineKeyboard [][]struct {
			Text         string `json:"text"`
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(markup), &m); err != nil {
		t.Fatalf("reply_markup %q: %v", markup, err)
	}
	for _, row := range m.InlineKeyboard {
		for _, b := range row {
			out[b.Text] = b.CallbackData
		}
	}
	return out
}

// TestAlertGroupInTelegram: 60 alerts of one group become one root
// message with an Ack button; a press from the root by an action user
// acks it (others are refused); the resolution replies to the root and
// edits its title.
func TestAlertGroupInTelegram(t *testing.T) {
	e := startSecured(t, map[string]string{"NOTIFIER_ACTION_USERS": "ann_oncall"})
	ctx := t.Context()
	const key = `{}:{alertname="KubePodCrashLooping"}`
	res, err := e.c.IngestAlertmanager(ctx, crashLooping(key, 60, "firing"))
	if err != nil {
		t.Fatal(err)
	}
	gid := res.GetAlerts()[0].GetGroupId()
	if gid == "" {
		t.Fatal("alerts carry no group id")
	}
	g := waitGroupDelivered(t, e.c, gid, 60)
	sent := e.tg.Sent()
	if len(sent) != 1 {
		t.Fatalf("%d messages sent for a group of 60, want 1", len(sent))
	}
	root := sent[0]
	if g.GetRootMessageId() != strconv.FormatInt(root.MessageID, 10) || g.GetFiringCount() != 60 || g.GetTitle() != "[FIRING:60] KubePodCrashLooping (shop warning)" {
		t.Errorf("group = root %q, firing %d, title %q; want root %d, 60, the Alertmanager title", g.GetRootMessageId(), g.GetFiringCount(), g.GetTitle(), root.MessageID)
	}
	text := plain(t, root.Text)
	for _, want := range []string{"[FIRING:60] KubePodCrashLooping (shop warning)", "… and 50 more", "Alertmanager: http://alertmanager.example.com:9093/#/alerts?"} {
		if !strings.Contains(text, want) {
			t.Errorf("root lacks %q:\n%s", want, text)
		}
	}
	buttons := buttonData(t, root.ReplyMarkup)
	ack := buttons["👀 Ack"]
	if ack == "" || len(ack) > 64 || len(buttons) != 1 {
		t.Fatalf("root buttons = %v, want only 👀 Ack without ALERTMANAGER_URL", buttons)
	}

	ann := &notifierv1.TelegramUser{Id: 501, FirstName: "Ann", Username: "ann_oncall"}
	mallory := &notifierv1.TelegramUser{Id: 666, FirstName: "Mallory", Username: "mallory"}
	for i, u := range []*notifierv1.TelegramUpdate{
		callback(20, mallory, ack, alertsChat, root.MessageID),           // not an action user
		callback(21, ann, ack, alertsChat, root.MessageID+1000),          // not the group's message
		callback(22, ann, ack, otherChat, root.MessageID),                // not an allowed chat
		callback(23, ann, "ag:"+gid+"x:ack", alertsChat, root.MessageID), // no such group
	} {
		if out, err := e.post(t, secSecret, u); err != nil || out != "refused" {
			t.Errorf("press %d: %q, %v; want refused", i, out, err)
		}
	}
	if g, _ := e.c.GetAlertGroup(ctx, &notifierv1.GetAlertGroupRequest{Id: gid}); g.GetAlertGroup().GetAck() != nil {
		t.Fatalf("refused presses acked the group: %v", g.GetAlertGroup().GetAck())
	}
	if out, err := e.post(t, secSecret, callback(24, ann, ack, alertsChat, root.MessageID)); err != nil || out != "decided" {
		t.Fatalf("Ack by ann: %q, %v; want decided", out, err)
	}
	answers := e.tg.WaitCalls("answerCallbackQuery", 5, 10*time.Second)
	if len(answers) != 5 || answers[4].Form["text"] != "👀 Acked by @ann_oncall" {
		t.Errorf("answers = %+v, want the fifth to say acked", answers)
	}
	edits := e.tg.WaitCalls("editMessageText", 1, 10*time.Second)
	if len(edits) != 1 {
		t.Fatalf("%d edits after the ack, want 1", len(edits))
	}
	if ed := edits[0]; ed.Form["message_id"] != strconv.FormatInt(root.MessageID, 10) || !strings.Contains(plain(t, ed.Form["text"]), "👀 acked by @ann_oncall") || ed.Form["parse_mode"] != "MarkdownV2" {
		t.Errorf("edit = %+v, want the root showing the ack", ed.Form)
	}
	if b := buttonData(t, edits[0].Form["reply_markup"]); len(b) != 0 {
		t.Errorf("buttons after the ack = %v, want none left", b)
	}
	got, _ := e.c.GetAlertGroup(ctx, &notifierv1.GetAlertGroupRequest{Id: gid})
	if a := got.GetAlertGroup().GetAck(); a.GetActor() != "@ann_oncall" || a.GetAckTime() == nil {
		t.Errorf("ack = %v, want @ann_oncall with a time", a)
	}

	if _, err := e.c.IngestAlertmanager(ctx, crashLooping(key, 60, "resolved")); err != nil {
		t.Fatal(err)
	}
	delivered := e.tg.WaitDelivered(2, 30*time.Second)
	if len(delivered) != 2 {
		t.Fatalf("%d messages after the resolution, want the root and one reply", len(delivered))
	}
	reply := delivered[1]
	if id, _ := reply.ReplyParameters["message_id"].(float64); int64(id) != root.MessageID {
		t.Errorf("reply_parameters = %v, want message_id %d", reply.ReplyParameters, root.MessageID)
	}
	if rt := plain(t, reply.Text); !strings.HasPrefix(rt, "[RESOLVED] KubePodCrashLooping (shop warning)\n60 resolved") {
		t.Errorf("reply = %q, want the resolved title and count", rt)
	}
	edits = e.tg.WaitCalls("editMessageText", 2, 10*time.Second)
	if len(edits) != 2 || !strings.HasPrefix(plain(t, edits[1].Form["text"]), "[RESOLVED] KubePodCrashLooping") {
		t.Fatalf("edits = %+v, want the root's title edited to RESOLVED", edits)
	}
	list, err := e.c.ListAlertGroups(ctx, &notifierv1.ListAlertGroupsRequest{Status: notifierv1.AlertGroup_RESOLVED})
	if err != nil || len(list.GetAlertGroups()) != 1 || list.GetAlertGroups()[0].GetResolvedCount() != 60 {
		t.Errorf("ListAlertGroups(RESOLVED) = %v, %v; want the group with 60 resolved", list, err)
	}
}

// TestGenericResolutionReplies: a generic alert that says it resolves,
// with the fingerprint of an alert that fired, replies to the firing
// message.
func TestGenericResolutionReplies(t *testing.T) {
	e := startSecured(t, nil)
	ctx := t.Context()
	md := func(status string) *structpb.Struct {
		s, err := structpb.NewStruct(map[string]any{"status": status, "fingerprint": "disk-db-1", "host": "db-1"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, err := e.c.IngestAlert(ctx, &notifierv1.IngestAlertRequest{Text: "Disk 97% full on db-1", Metadata: md("firing")}); err != nil {
		t.Fatal(err)
	}
	firing := e.tg.WaitDelivered(1, 30*time.Second)
	if len(firing) != 1 {
		t.Fatal("the firing alert was not delivered")
	}
	res, err := e.c.IngestAlert(ctx, &notifierv1.IngestAlertRequest{Text: "Disk back to 60% on db-1", Metadata: md("resolved")})
	if err != nil {
		t.Fatal(err)
	}
	if a := res.GetAlert(); a.GetAlertStatus() != "resolved" || a.GetFingerprint() != "disk-db-1" {
		t.Errorf("resolution stored as %q / %q, want resolved / disk-db-1", a.GetAlertStatus(), a.GetFingerprint())
	}
	sent := e.tg.WaitDelivered(2, 30*time.Second)
	if len(sent) != 2 {
		t.Fatal("the resolution was not delivered")
	}
	if id, _ := sent[1].ReplyParameters["message_id"].(float64); int64(id) != firing[0].MessageID {
		t.Errorf("resolution reply_parameters = %v, want message_id %d", sent[1].ReplyParameters, firing[0].MessageID)
	}
	if strings.Contains(sent[1].Text, "Enriched Context") {
		t.Errorf("resolution enriched: %s", sent[1].Text)
	}
}

// TestAlertGroupRPCs: the web clients' actions record the caller's key name
// as the actor, and bad or impossible requests get their codes.
func TestAlertGroupRPCs(t *testing.T) {
	e := startSecured(t, nil)
	ctx := t.Context()
	res, err := e.c.IngestAlertmanager(ctx, crashLooping("k", 2, "firing"))
	if err != nil {
		t.Fatal(err)
	}
	gid := res.GetAlerts()[0].GetGroupId()
	waitGroupDelivered(t, e.c, gid, 2)

	ack, err := e.c.AckAlertGroup(actor.OutgoingContext(ctx, "ops-console"), &notifierv1.AckAlertGroupRequest{Id: gid, By: "Ann"})
	if err != nil {
		t.Fatal(err)
	}
	if a := ack.GetAlertGroup().GetAck(); a.GetActor() != "ops-console" || a.GetBy() != "Ann" {
		t.Errorf("ack = %v, want actor ops-console (the key name) and by Ann", a)
	}
	tests := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"silence without ALERTMANAGER_URL", func() error {
			_, err := e.c.SilenceAlertGroup(ctx, &notifierv1.SilenceAlertGroupRequest{Id: gid, Duration: durationpb.New(time.Hour)})
			return err
		}, codes.FailedPrecondition},
		{"silence without a duration", func() error {
			_, err := e.c.SilenceAlertGroup(ctx, &notifierv1.SilenceAlertGroupRequest{Id: gid})
			return err
		}, codes.InvalidArgument},
		{"silence for 31 days", func() error {
			_, err := e.c.SilenceAlertGroup(ctx, &notifierv1.SilenceAlertGroupRequest{Id: gid, Duration: durationpb.New(31 * 24 * time.Hour)})
			return err
		}, codes.InvalidArgument},
		{"ack of no group", func() error {
			_, err := e.c.AckAlertGroup(ctx, &notifierv1.AckAlertGroupRequest{Id: "nope"})
			return err
		}, codes.NotFound},
		{"get of no group", func() error {
			_, err := e.c.GetAlertGroup(ctx, &notifierv1.GetAlertGroupRequest{Id: "nope"})
			return err
		}, codes.NotFound},
		{"bad page token", func() error {
			_, err := e.c.ListAlertGroups(ctx, &notifierv1.ListAlertGroupsRequest{PageToken: "junk"})
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call()); got != tc.want {
				t.Errorf("code = %s, want %s", got, tc.want)
			}
		})
	}
}

// TestSilenceWithAlertmanagerDown: a Silence press while Alertmanager is
// unreachable is answered so and records nothing; REST says Unavailable.
func TestSilenceWithAlertmanagerDown(t *testing.T) {
	e := startSecured(t, map[string]string{"ALERTMANAGER_URL": "http://" + closedAddr(t)})
	ctx := t.Context()
	res, err := e.c.IngestAlertmanager(ctx, crashLooping("k", 2, "firing"))
	if err != nil {
		t.Fatal(err)
	}
	gid := res.GetAlerts()[0].GetGroupId()
	waitGroupDelivered(t, e.c, gid, 2)
	root := e.tg.Delivered()[0]
	silence := buttonData(t, root.ReplyMarkup)["🔕 Silence 24h"]
	if silence == "" {
		t.Fatalf("root has no Silence 24h button: %s", root.ReplyMarkup)
	}
	ann := &notifierv1.TelegramUser{Id: 501, FirstName: "Ann", Username: "ann_oncall"}
	if out, err := e.post(t, secSecret, callback(40, ann, silence, alertsChat, root.MessageID)); err != nil || out != "decided" {
		t.Fatalf("Silence press: %q, %v", out, err)
	}
	answers := e.tg.WaitCalls("answerCallbackQuery", 1, 10*time.Second)
	if len(answers) != 1 || answers[0].Form["text"] != "Could not silence: Alertmanager is unreachable" {
		t.Errorf("answers = %+v, want the press told Alertmanager is unreachable", answers)
	}
	got, err := e.c.GetAlertGroup(ctx, &notifierv1.GetAlertGroupRequest{Id: gid})
	if err != nil || got.GetAlertGroup().GetSilence() != nil {
		t.Errorf("group silence = %v, %v; want none recorded", got.GetAlertGroup().GetSilence(), err)
	}
	_, err = e.c.SilenceAlertGroup(ctx, &notifierv1.SilenceAlertGroupRequest{Id: gid, Duration: durationpb.New(time.Hour)})
	if status.Code(err) != codes.Unavailable || !strings.Contains(status.Convert(err).Message(), "unreachable") {
		t.Errorf("SilenceAlertGroup error = %v, want Unavailable saying Alertmanager is unreachable", err)
	}
	if edits := e.tg.Calls("editMessageText"); len(edits) != 0 {
		t.Errorf("the root was edited although nothing changed: %+v", edits)
	}
}

// TestOfflineGroupInDeliveryLog is the "done" check offline: a
// group of 60 goes to the delivery log as one valid root saying 60 fire;
// its resolution as one reply to the root and an edit of the root.
func TestOfflineGroupInDeliveryLog(t *testing.T) {
	n := runNotifier(t, map[string]string{
		"DATA_DIR": t.TempDir(), "NOTIFIER_LISTEN_ADDR": "127.0.0.1:0", "NOTIFIER_ADMIN_ADDR": "127.0.0.1:0",
		"GROUNDING_ADDR": closedAddr(t), "NOTIFIER_POLL_INTERVAL": "20ms", "GRACE_PERIOD": "2s",
	})
	c := dial(t, n.grpcAddr)
	const key = `{}:{alertname="KubePodCrashLooping"}`
	res, err := c.IngestAlertmanager(t.Context(), crashLooping(key, 60, "firing"))
	if err != nil {
		t.Fatal(err)
	}
	gid := res.GetAlerts()[0].GetGroupId()
	g := waitGroupDelivered(t, c, gid, 60)
	if g.GetDestination() != "log" || !strings.HasPrefix(g.GetRootMessageId(), "log:") {
		t.Errorf("group destination %q root %q, want the log", g.GetDestination(), g.GetRootMessageId())
	}
	roots := n.logs.Named(t, "delivery log: alert group message")
	if len(roots) != 1 {
		t.Fatalf("%d group messages logged, want 1 root", len(roots))
	}
	if msg, _ := roots[0]["message"].(string); !strings.HasPrefix(msg, "[FIRING:60] KubePodCrashLooping (shop warning)\n") || !strings.Contains(msg, "… and 50 more") {
		t.Errorf("root logged as %q", msg)
	}
	if _, err := c.IngestAlertmanager(t.Context(), crashLooping(key, 60, "resolved")); err != nil {
		t.Fatal(err)
	}
	waitfor.Cond(t, "the root edited after the resolution", func() bool {
		return len(n.logs.Named(t, "delivery log: alert group message edited")) > 0
	})
	msgs := n.logs.Named(t, "delivery log: alert group message")
	if len(msgs) != 2 || msgs[1]["reply_to"] != g.GetRootMessageId() {
		t.Fatalf("group messages = %v, want the root and one reply to %s", msgs, g.GetRootMessageId())
	}
	edit := n.logs.Named(t, "delivery log: alert group message edited")[0]
	if msg, _ := edit["message"].(string); edit["message_id"] != g.GetRootMessageId() || !strings.HasPrefix(msg, "[RESOLVED] KubePodCrashLooping") {
		t.Errorf("edit = %v, want the root saying RESOLVED", edit)
	}
}

// TestGrafanaGroup: a Grafana payload with a groupKey is one root too, and
// gets no Silence buttons (they act on Alertmanager).
func TestGrafanaGroup(t *testing.T) {
	e := startSecured(t, map[string]string{"ALERTMANAGER_URL": "http://" + closedAddr(t)})
	req := &notifierv1.IngestGrafanaRequest{
		Receiver: "groundcrew", Status: "firing", GroupKey: `{}/{}:{alertname="HighLatency"}`,
		GroupLabels:  map[string]string{"alertname": "HighLatency"},
		CommonLabels: map[string]string{"alertname": "HighLatency", "grafana_folder": "api"},
	}
	for i := range 3 {
		req.Alerts = append(req.Alerts, &notifierv1.GrafanaAlert{
			Status: "firing", Fingerprint: fmt.Sprintf("g%d", i),
			Labels:      map[string]string{"alertname": "HighLatency", "grafana_folder": "api", "instance": fmt.Sprintf("api-%d", i)},
			Annotations: map[string]string{"summary": fmt.Sprintf("p99 over 2s on api-%d", i)},
		})
	}
	res, err := e.c.IngestGrafana(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	g := waitGroupDelivered(t, e.c, res.GetAlerts()[0].GetGroupId(), 3)
	sent := e.tg.Delivered()
	if len(sent) != 1 || g.GetSource() != "grafana" || g.GetTitle() != "[FIRING:3] HighLatency (api)" {
		t.Fatalf("%d messages, group %v; want one root of a grafana group", len(sent), g)
	}
	if text := plain(t, sent[0].Text); !strings.Contains(text, "🔥 instance=api-0 — p99 over 2s on api-0") {
		t.Errorf("root lacks the alert line:\n%s", text)
	}
	if b := buttonData(t, sent[0].ReplyMarkup); len(b) != 1 || b["👀 Ack"] == "" {
		t.Errorf("buttons = %v, want only 👀 Ack for a Grafana group", b)
	}
}
