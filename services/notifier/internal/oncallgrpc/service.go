package oncallgrpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/api/httpbody"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
)

// Store is what the service reads and writes (oncallstore.Store).
type Store interface {
	oncall.Store
	Schedules(ctx context.Context) ([]*oncall.Schedule, error)
	PutSchedule(ctx context.Context, s *oncall.Schedule, by string) error
	DeleteSchedule(ctx context.Context, id string) error
	PutPolicy(ctx context.Context, p oncall.Policy, by string) error
	DeletePolicy(ctx context.Context, id string) error
	GroupExists(ctx context.Context, id string) (bool, error)
}

// Service implements notifierv1.OnCallServiceServer.
type Service struct {
	notifierv1.UnimplementedOnCallServiceServer
	store  Store
	logger *slog.Logger
	now    func() time.Time
}

var _ notifierv1.OnCallServiceServer = (*Service)(nil)

// New returns the service over store.
func New(store Store, logger *slog.Logger) *Service {
	return &Service{store: store, logger: logger, now: time.Now}
}

func (s *Service) fail(ctx context.Context, err error, what string) error {
	if errors.Is(err, oncall.ErrNotFound) {
		return status.Error(codes.NotFound, what+" not found")
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return grpcserver.InternalError(ctx, s.logger, err, what)
}

// ListSchedules lists every schedule.
func (s *Service) ListSchedules(ctx context.Context, _ *notifierv1.ListSchedulesRequest) (*notifierv1.ListSchedulesResponse, error) {
	all, err := s.store.Schedules(ctx)
	if err != nil {
		return nil, s.fail(ctx, err, "listing schedules")
	}
	out := &notifierv1.ListSchedulesResponse{}
	for _, sc := range all {
		out.Schedules = append(out.Schedules, toSchedule(sc))
	}
	return out, nil
}

// GetSchedule returns one schedule.
func (s *Service) GetSchedule(ctx context.Context, req *notifierv1.GetScheduleRequest) (*notifierv1.GetScheduleResponse, error) {
	sc, err := s.store.Schedule(ctx, req.GetId())
	if err != nil {
		return nil, s.fail(ctx, err, "schedule")
	}
	return &notifierv1.GetScheduleResponse{Schedule: toSchedule(sc)}, nil
}

// PutSchedule stores a schedule under the path's id.
func (s *Service) PutSchedule(ctx context.Context, req *notifierv1.PutScheduleRequest) (*notifierv1.PutScheduleResponse, error) {
	in := req.GetSchedule()
	in.Id = req.GetId()
	sc, err := fromSchedule("schedule.", in)
	if err != nil {
		return nil, err
	}
	if err := s.store.PutSchedule(ctx, sc, actor.Or(ctx, "api")); err != nil {
		return nil, s.fail(ctx, err, "storing schedule")
	}
	s.logger.InfoContext(ctx, "on-call schedule stored", "schedule", sc.ID, "by", actor.Or(ctx, "api"))
	return &notifierv1.PutScheduleResponse{Schedule: toSchedule(sc)}, nil
}

// DeleteSchedule deletes a schedule no policy names.
func (s *Service) DeleteSchedule(ctx context.Context, req *notifierv1.DeleteScheduleRequest) (*notifierv1.DeleteScheduleResponse, error) {
	policies, err := s.store.Policies(ctx)
	if err != nil {
		return nil, s.fail(ctx, err, "listing policies")
	}
	for _, p := range policies {
		for _, st := range p.Steps {
			if st.ScheduleID == req.GetId() {
				return nil, grpcserver.PreconditionFailed("SCHEDULE_IN_USE", "policies/"+p.ID,
					fmt.Sprintf("policy %q escalates to schedule %q: change or delete the policy first", p.ID, req.GetId()))
			}
		}
	}
	if err := s.store.DeleteSchedule(ctx, req.GetId()); err != nil {
		return nil, s.fail(ctx, err, "schedule")
	}
	return &notifierv1.DeleteScheduleResponse{}, nil
}

// GetOnCall says who is on call at a time.
func (s *Service) GetOnCall(ctx context.Context, req *notifierv1.GetOnCallRequest) (*notifierv1.GetOnCallResponse, error) {
	sc, err := s.store.Schedule(ctx, req.GetId())
	if err != nil {
		return nil, s.fail(ctx, err, "schedule")
	}
	t := s.now()
	if req.GetAt() != nil {
		t = req.GetAt().AsTime()
	}
	cur, next, ok, hasNext := sc.OnCall(t)
	out := &notifierv1.GetOnCallResponse{}
	if ok {
		out.Current = toShift(cur)
	}
	if hasNext {
		out.Next = toShift(next)
	}
	return out, nil
}

// ListShifts lists a schedule's shifts in a window.
func (s *Service) ListShifts(ctx context.Context, req *notifierv1.ListShiftsRequest) (*notifierv1.ListShiftsResponse, error) {
	sc, err := s.store.Schedule(ctx, req.GetId())
	if err != nil {
		return nil, s.fail(ctx, err, "schedule")
	}
	from := s.now()
	if req.GetStartTime() != nil {
		from = req.GetStartTime().AsTime()
	}
	to := from.Add(7 * 24 * time.Hour)
	if req.GetEndTime() != nil {
		to = req.GetEndTime().AsTime()
	}
	out := &notifierv1.ListShiftsResponse{}
	for _, sh := range sc.Shifts(from, to) {
		out.Shifts = append(out.Shifts, toShift(sh))
	}
	return out, nil
}

// calendarDays is how far ahead the calendar feed lists shifts.
const calendarDays = 28

// GetCalendar renders a schedule's coming shifts as iCalendar.
func (s *Service) GetCalendar(ctx context.Context, req *notifierv1.GetCalendarRequest) (*notifierv1.GetCalendarResponse, error) {
	sc, err := s.store.Schedule(ctx, req.GetId())
	if err != nil {
		return nil, s.fail(ctx, err, "schedule")
	}
	now := s.now().UTC()
	from := now.Truncate(time.Hour)
	ics := Calendar(sc, sc.Shifts(from, from.Add(calendarDays*24*time.Hour)), now)
	return &notifierv1.GetCalendarResponse{Calendar: &httpbody.HttpBody{ContentType: "text/calendar; charset=utf-8", Data: []byte(ics)}}, nil
}

// Calendar renders shifts as an iCalendar document (RFC 5545): one event
// per shift, in UTC, with a stable UID so calendar clients update rather
// than duplicate.
func Calendar(sc *oncall.Schedule, shifts []oncall.Shift, stamp time.Time) string {
	var b strings.Builder
	line := func(s string) { b.WriteString(s + "\r\n") }
	const ts = "20060102T150405Z"
	line("BEGIN:VCALENDAR")
	line("VERSION:2.0")
	line("PRODID:-//groundcrew//on-call//EN")
	line("CALSCALE:GREGORIAN")
	line("X-WR-CALNAME:" + icsText("On call: "+firstNonEmpty(sc.Name, sc.ID)))
	for _, sh := range shifts {
		who := sh.Participant.String()
		source := sh.Layer
		if sh.Override {
			source = "override"
		}
		line("BEGIN:VEVENT")
		line(fmt.Sprintf("UID:%s-%d-%s@groundcrew", sc.ID, sh.Start.Unix(), icsText(strings.TrimPrefix(who, "@"))))
		line("DTSTAMP:" + stamp.UTC().Format(ts))
		line("DTSTART:" + sh.Start.UTC().Format(ts))
		line("DTEND:" + sh.End.UTC().Format(ts))
		line("SUMMARY:" + icsText(fmt.Sprintf("On call: %s (%s)", who, source)))
		line("END:VEVENT")
	}
	line("END:VCALENDAR")
	return b.String()
}

// icsText escapes a TEXT value (RFC 5545 3.3.11).
func icsText(s string) string {
	return strings.NewReplacer(`\`, `\\`, ";", `\;`, ",", `\,`, "\n", `\n`, "\r", "").Replace(s)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Service) scheduleIDs(ctx context.Context) (map[string]bool, error) {
	all, err := s.store.Schedules(ctx)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, sc := range all {
		ids[sc.ID] = true
	}
	return ids, nil
}

// ListPolicies lists every policy.
func (s *Service) ListPolicies(ctx context.Context, _ *notifierv1.ListPoliciesRequest) (*notifierv1.ListPoliciesResponse, error) {
	all, err := s.store.Policies(ctx)
	if err != nil {
		return nil, s.fail(ctx, err, "listing policies")
	}
	out := &notifierv1.ListPoliciesResponse{}
	for _, p := range all {
		out.Policies = append(out.Policies, toPolicy(p))
	}
	return out, nil
}

// PutPolicy stores a policy under the path's id.
func (s *Service) PutPolicy(ctx context.Context, req *notifierv1.PutPolicyRequest) (*notifierv1.PutPolicyResponse, error) {
	ids, err := s.scheduleIDs(ctx)
	if err != nil {
		return nil, s.fail(ctx, err, "listing schedules")
	}
	in := req.GetPolicy()
	in.Id = req.GetId()
	p, err := fromPolicy("policy.", in, ids)
	if err != nil {
		return nil, err
	}
	if err := s.store.PutPolicy(ctx, p, actor.Or(ctx, "api")); err != nil {
		return nil, s.fail(ctx, err, "storing policy")
	}
	s.logger.InfoContext(ctx, "escalation policy stored", "policy", p.ID, "by", actor.Or(ctx, "api"))
	return &notifierv1.PutPolicyResponse{Policy: toPolicy(p)}, nil
}

// DeletePolicy deletes a policy; escalations under it stop at their next step.
func (s *Service) DeletePolicy(ctx context.Context, req *notifierv1.DeletePolicyRequest) (*notifierv1.DeletePolicyResponse, error) {
	if err := s.store.DeletePolicy(ctx, req.GetId()); err != nil {
		return nil, s.fail(ctx, err, "policy")
	}
	return &notifierv1.DeletePolicyResponse{}, nil
}

// GetEscalation returns a group's escalation and timeline.
func (s *Service) GetEscalation(ctx context.Context, req *notifierv1.GetEscalationRequest) (*notifierv1.GetEscalationResponse, error) {
	e, err := s.store.Escalation(ctx, req.GetGroupId())
	if errors.Is(err, oncall.ErrNotFound) {
		// A group no policy took has no escalation: that is an answer, not
		// an error (the console asks for every group it shows).
		ok, gerr := s.store.GroupExists(ctx, req.GetGroupId())
		if gerr != nil {
			return nil, s.fail(ctx, gerr, "alert group")
		}
		if ok {
			return &notifierv1.GetEscalationResponse{}, nil
		}
		return nil, status.Error(codes.NotFound, "alert group not found")
	}
	if err != nil {
		return nil, s.fail(ctx, err, "escalation")
	}
	return &notifierv1.GetEscalationResponse{Escalation: toEscalation(e)}, nil
}
