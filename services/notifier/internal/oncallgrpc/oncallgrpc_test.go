package oncallgrpc

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncallstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

func newService(t *testing.T) (*Service, *oncallstore.Store) {
	t.Helper()
	ctx := context.Background()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlstore.Open(ctx, sqlstoretest.URL(t, "notifier_oncallgrpc"), t.TempDir(), "notifier", logger)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(ctx, db); err != nil {
		t.Fatal(err)
	}
	st := oncallstore.New(db)
	return New(st, logger), st
}

// The README's example file loads, and answers who is on call.
func TestExampleFile(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	ns, np, err := LoadFile(ctx, st, "../../../../examples/oncall.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if ns != 2 || np != 2 {
		t.Fatalf("loaded %d schedules and %d policies, want 2 and 2", ns, np)
	}
	berlin, _ := time.LoadLocation("Europe/Berlin")
	ask := func(at time.Time) *notifierv1.GetOnCallResponse {
		t.Helper()
		resp, err := svc.GetOnCall(ctx, &notifierv1.GetOnCallRequest{Id: "db-primary", At: timestamppb.New(at)})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	tests := []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 11, 3, 12, 0, 0, 0, berlin), "ann_sre"},     // week 1
		{time.Date(2026, 11, 10, 12, 0, 0, 0, berlin), "ben_dba"},    // week 2, Monday after 10:00
		{time.Date(2026, 11, 17, 12, 0, 0, 0, berlin), ""},           // week 3: Cat, by name
		{time.Date(2026, 11, 17, 23, 30, 0, 0, berlin), "dana_apac"}, // nights win
		{time.Date(2026, 11, 18, 5, 59, 0, 0, berlin), "dana_apac"},
		{time.Date(2026, 12, 25, 12, 0, 0, 0, berlin), "ben_dba"}, // override
	}
	for _, tt := range tests {
		got := ask(tt.at).GetCurrent().GetParticipant()
		if got.GetUsername() != tt.want {
			t.Errorf("on call at %v: %v, want %q", tt.at, got, tt.want)
		}
	}
	if got := ask(time.Date(2026, 11, 17, 12, 0, 0, 0, berlin)).GetCurrent().GetParticipant(); got.GetName() != "Cat" || got.GetUserId() != 333333333 {
		t.Errorf("week 3 on call: %v, want Cat by id", got)
	}
	resp := ask(time.Date(2026, 11, 3, 12, 0, 0, 0, berlin))
	if !resp.GetNext().GetStartTime().AsTime().Equal(time.Date(2026, 11, 3, 22, 0, 0, 0, berlin)) || resp.GetNext().GetParticipant().GetUsername() != "dana_apac" {
		t.Errorf("next hand-off %v", resp.GetNext())
	}
	shifts, err := svc.ListShifts(ctx, &notifierv1.ListShiftsRequest{Id: "db-primary",
		StartTime: timestamppb.New(time.Date(2026, 11, 2, 10, 0, 0, 0, berlin)), EndTime: timestamppb.New(time.Date(2026, 11, 9, 10, 0, 0, 0, berlin))})
	if err != nil {
		t.Fatal(err)
	}
	// Ann's week (Monday 10:00 to Monday 10:00) is cut by seven nights:
	// eight day spans and seven night shifts.
	if n := len(shifts.GetShifts()); n != 15 {
		t.Errorf("%d shifts in the first week, want 15", n)
	}
	pol, err := svc.ListPolicies(ctx, &notifierv1.ListPoliciesRequest{})
	if err != nil || len(pol.GetPolicies()) != 2 || pol.GetPolicies()[0].GetMatch() != "team=db" || pol.GetPolicies()[0].GetSteps()[0].GetWaitMinutes() != 5 {
		t.Fatalf("policies %v, %v", pol, err)
	}
}

func TestCalendarFeed(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	if _, _, err := LoadFile(ctx, st, "../../../../examples/oncall.yaml"); err != nil {
		t.Fatal(err)
	}
	svc.now = func() time.Time { return time.Date(2026, 11, 3, 8, 30, 0, 0, time.UTC) }
	resp, err := svc.GetCalendar(ctx, &notifierv1.GetCalendarRequest{Id: "db-primary"})
	if err != nil {
		t.Fatal(err)
	}
	body := string(resp.GetCalendar().GetData())
	if resp.GetCalendar().GetContentType() != "text/calendar; charset=utf-8" {
		t.Errorf("content type %q", resp.GetCalendar().GetContentType())
	}
	for _, want := range []string{"BEGIN:VCALENDAR\r\n", "SUMMARY:On call: @ann_sre (weekly)\r\n", "SUMMARY:On call: @dana_apac (nights)\r\n",
		"DTSTART:20261103T080000Z\r\n", "DTEND:20261103T210000Z\r\n", "END:VCALENDAR\r\n"} {
		if !strings.Contains(body, want) {
			t.Errorf("calendar lacks %q:\n%s", want, body[:min(len(body), 800)])
		}
	}
	if n := strings.Count(body, "BEGIN:VEVENT"); n < 50 {
		t.Errorf("%d events in 28 days, want a day and a night shift a day", n)
	}
}

func violationsOf(t *testing.T, err error) map[string]string {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.InvalidArgument {
		t.Fatalf("error %v, want InvalidArgument", err)
	}
	out := map[string]string{}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out[v.GetField()] = v.GetDescription()
			}
		}
	}
	return out
}

func TestPutRefusesWhatRulesCannotSay(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	_, err := svc.PutSchedule(ctx, &notifierv1.PutScheduleRequest{Id: "x", Schedule: &notifierv1.Schedule{
		TimeZone: "Mars/Olympus",
		Layers: []*notifierv1.Layer{{Name: "p", Participants: []*notifierv1.Participant{{UserId: 1}},
			Rotation: &notifierv1.Rotation{Length: notifierv1.Rotation_HOURS, StartDate: "2026-02-30"}}},
	}})
	v := violationsOf(t, err)
	for _, f := range []string{"schedule.time_zone", "schedule.layers[0].rotation.hours", "schedule.layers[0].rotation.start_date"} {
		if v[f] == "" {
			t.Errorf("no violation for %s in %v", f, v)
		}
	}
	_, err = svc.PutPolicy(ctx, &notifierv1.PutPolicyRequest{Id: "p", Policy: &notifierv1.EscalationPolicy{Match: "team",
		Steps: []*notifierv1.EscalationStep{{ScheduleId: "nope", WaitMinutes: 5}}}})
	if v := violationsOf(t, err); v["policy.match"] == "" {
		t.Errorf("violations %v, want policy.match", v)
	}
	_, err = svc.PutPolicy(ctx, &notifierv1.PutPolicyRequest{Id: "p", Policy: &notifierv1.EscalationPolicy{
		Steps: []*notifierv1.EscalationStep{{ScheduleId: "nope", WaitMinutes: 5}}}})
	if v := violationsOf(t, err); v["policy.steps[0].schedule_id"] == "" {
		t.Errorf("violations %v, want policy.steps[0].schedule_id", v)
	}
}

func TestDeleteScheduleInUse(t *testing.T) {
	ctx := context.Background()
	svc, st := newService(t)
	if _, _, err := LoadFile(ctx, st, "../../../../examples/oncall.yaml"); err != nil {
		t.Fatal(err)
	}
	_, err := svc.DeleteSchedule(ctx, &notifierv1.DeleteScheduleRequest{Id: "db-secondary"})
	if status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("deleting a schedule a policy names: %v, want FailedPrecondition", err)
	}
	if _, err := svc.GetSchedule(ctx, &notifierv1.GetScheduleRequest{Id: "missing"}); status.Code(err) != codes.NotFound {
		t.Errorf("missing schedule: %v", err)
	}
	if _, err := svc.GetEscalation(ctx, &notifierv1.GetEscalationRequest{GroupId: "g"}); status.Code(err) != codes.NotFound {
		t.Errorf("escalation of a group that does not exist: %v, want NotFound", err)
	}
}

func TestParseFileErrorsNameTheField(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown field":  "schedules:\n  - id: a\n    layerz: []\n",
		"rule":           "schedules:\n  - id: A B\n    layers: []\n",
		"not yaml":       "schedules: [",
		"bad wait":       "policies:\n  - id: p\n    steps: [{users: [{user_id: 1}], wait_minutes: 0}]\n",
		"no participant": "policies:\n  - id: p\n    steps: [{users: [{name: x}], wait_minutes: 1}]\n",
	} {
		if _, err := ParseFile("oncall.yaml", []byte(doc)); err == nil || !strings.HasPrefix(err.Error(), "oncall.yaml: ") {
			t.Errorf("%s: ParseFile = %v, want an error naming the file", name, err)
		}
	}
	if _, err := os.Stat("../../../../examples/oncall.yaml"); err != nil {
		t.Fatal(err)
	}
}

// The README's YAML example loads as written.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const start = "```yaml\n# NOTIFIER_ONCALL_FILE"
	i := strings.Index(string(readme), start)
	if i < 0 {
		t.Fatal("README.md has no NOTIFIER_ONCALL_FILE example")
	}
	block := string(readme[i+len("```yaml\n"):])
	block = block[:strings.Index(block, "```")]
	path := t.TempDir() + "/oncall.yaml"
	if err := os.WriteFile(path, []byte(block), 0o600); err != nil {
		t.Fatal(err)
	}
	_, st := newService(t)
	if ns, np, err := LoadFile(t.Context(), st, path); err != nil || ns != 1 || np != 1 {
		t.Fatalf("LoadFile(README example) = %d schedules, %d policies, %v", ns, np, err)
	}
}
