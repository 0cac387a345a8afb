package notifiergrpc

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/pipeline"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// Groups is the alert group intake, store and actions (the pipeline).
type Groups interface {
	IngestGroup(ctx context.Context, gp alert.GroupPayload, alerts []alert.Alert) ([]*alert.Alert, error)
	GetGroup(ctx context.Context, id string) (*alert.Group, []*alert.Alert, error)
	ListGroups(ctx context.Context, q store.GroupListQuery) (store.Page[*alert.Group], error)
	Ack(ctx context.Context, id, actor, by string) (*alert.Group, error)
	Silence(ctx context.Context, id, actor, by string, d time.Duration) (*alert.Group, error)
	AllowedActions(g *alert.Group) []alert.GroupAction
}

var _ Groups = (*pipeline.Pipeline)(nil)

// restActor is who a REST or gRPC caller is, by actor.Resolve's rule: the
// gateway's key name, else the by the caller gave marked self-declared,
// else "api".
func restActor(ctx context.Context, by string) string {
	if name, _ := actor.Resolve(ctx, by); name != "" {
		return name
	}
	return "api"
}

// ingestUpstream stores a payload's alerts as a group notification when
// the service takes groups and the payload names its group, else one by
// one. This is the one place the fork is decided.
func (s *NotifierService) ingestUpstream(ctx context.Context, gp alert.GroupPayload, grouped bool, as []alert.Alert) ([]*alert.Alert, error) {
	if grouped && s.groups != nil {
		return s.groups.IngestGroup(ctx, gp, as)
	}
	return s.alerts.Ingest(ctx, as)
}

// ListAlertGroups lists alert groups, newest first.
func (s *NotifierService) ListAlertGroups(ctx context.Context, req *notifierv1.ListAlertGroupsRequest) (*notifierv1.ListAlertGroupsResponse, error) {
	if s.groups == nil {
		return nil, status.Error(codes.Unimplemented, "alert groups are not configured")
	}
	q := store.GroupListQuery{PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken()}
	if q.PageSize <= 0 {
		q.PageSize = defaultPageSize
	}
	if req.GetStatus() != notifierv1.AlertGroup_STATUS_UNSPECIFIED {
		q.Status = alert.GroupStatus(req.GetStatus().String())
	}
	page, err := s.groups.ListGroups(ctx, q)
	if err != nil {
		return nil, s.groupError(ctx, err, "listing alert groups")
	}
	out := &notifierv1.ListAlertGroupsResponse{NextPageToken: page.Next, SizeLimited: page.SizeLimited}
	for _, g := range page.Items {
		out.AlertGroups = append(out.AlertGroups, s.fromGroup(g, nil))
	}
	return out, nil
}

// GetAlertGroup returns a group with its alerts.
func (s *NotifierService) GetAlertGroup(ctx context.Context, req *notifierv1.GetAlertGroupRequest) (*notifierv1.GetAlertGroupResponse, error) {
	if s.groups == nil {
		return nil, status.Error(codes.Unimplemented, "alert groups are not configured")
	}
	g, as, err := s.groups.GetGroup(ctx, req.GetId())
	if err != nil {
		return nil, s.groupError(ctx, err, "reading alert group")
	}
	return &notifierv1.GetAlertGroupResponse{AlertGroup: s.fromGroup(g, as)}, nil
}

// SilenceAlertGroup silences a group in Alertmanager in the caller's name.
func (s *NotifierService) SilenceAlertGroup(ctx context.Context, req *notifierv1.SilenceAlertGroupRequest) (*notifierv1.SilenceAlertGroupResponse, error) {
	if s.groups == nil {
		return nil, status.Error(codes.Unimplemented, "alert groups are not configured")
	}
	g, err := s.groups.Silence(ctx, req.GetId(), restActor(ctx, req.GetBy()), req.GetBy(), req.GetDuration().AsDuration())
	if err != nil {
		return nil, s.groupError(ctx, err, "silencing alert group")
	}
	return &notifierv1.SilenceAlertGroupResponse{AlertGroup: s.fromGroup(g, nil)}, nil
}

// AckAlertGroup records the caller's acknowledgement of a group.
func (s *NotifierService) AckAlertGroup(ctx context.Context, req *notifierv1.AckAlertGroupRequest) (*notifierv1.AckAlertGroupResponse, error) {
	if s.groups == nil {
		return nil, status.Error(codes.Unimplemented, "alert groups are not configured")
	}
	g, err := s.groups.Ack(ctx, req.GetId(), restActor(ctx, req.GetBy()), req.GetBy())
	if err != nil {
		return nil, s.groupError(ctx, err, "acknowledging alert group")
	}
	return &notifierv1.AckAlertGroupResponse{AlertGroup: s.fromGroup(g, nil)}, nil
}

// groupError maps the group domain's errors to gRPC codes.
func (s *NotifierService) groupError(ctx context.Context, err error, doing string) error {
	var pub interface{ Public() string }
	switch {
	case errors.Is(err, store.ErrNotFound):
		return status.Error(codes.NotFound, "alert group not found")
	case errors.Is(err, store.ErrBadPageToken):
		return s.alertError(ctx, err, doing)
	case errors.Is(err, pipeline.ErrSilenceUnavailable):
		// The server's configuration or the group's state, in words: not
		// the caller's request to correct.
		reason := pipeline.SilenceNotConfigured
		if r, ok := errors.AsType[*pipeline.SilenceRefusal](err); ok {
			reason = r.Reason
		}
		return grpcserver.PreconditionFailed("SILENCE_UNAVAILABLE", "alert-groups", reason)
	case errors.As(err, &pub):
		// Alertmanager unreachable or refusing: said in its own safe words.
		s.logger.WarnContext(ctx, doing+" failed", "error", err)
		return status.Error(codes.Unavailable, pub.Public())
	}
	return s.alertError(ctx, err, doing)
}

// fromGroup converts g, with its alerts (nil: none) and what may be done
// to it now.
func (s *NotifierService) fromGroup(g *alert.Group, as []*alert.Alert) *notifierv1.AlertGroup {
	out := &notifierv1.AlertGroup{
		Id: g.ID, GroupKey: g.GroupKey, Source: g.Source, Destination: g.Destination,
		RootMessageId: g.RootMessageID, FiringCount: int32(g.Firing), ResolvedCount: int32(g.Resolved),
		Title: g.Title(), CommonLabels: g.CommonLabels, ExternalUrl: g.ExternalURL,
		GroundingMessageId: g.GroundingMessageID, EnrichmentError: g.EnrichmentError,
		CreateTime: fromTime(g.CreatedAt), UpdateTime: fromTime(g.UpdatedAt),
		Status: notifierv1.AlertGroup_Status(notifierv1.AlertGroup_Status_value[string(g.Status)]),
	}
	if sil := g.Silence; sil != nil {
		out.Silence = &notifierv1.AlertGroupSilence{
			SilenceId: sil.ID, Actor: sil.Actor, By: sil.By, EndTime: fromTime(sil.EndsAt), CreateTime: fromTime(sil.CreatedAt), Expired: sil.Expired,
			SelfDeclared: strings.HasSuffix(sil.Actor, actor.SelfDeclared),
		}
	}
	if a := g.Ack; a != nil {
		out.Ack = &notifierv1.AlertGroupAck{Actor: a.Actor, By: a.By, AckTime: fromTime(a.At), SelfDeclared: strings.HasSuffix(a.Actor, actor.SelfDeclared)}
	}
	if s.groups != nil {
		out.AllowedActions = fromActions(s.groups.AllowedActions(g))
	}
	// Latest first, as the contract says, up to the size of a list page:
	// a group's alerts accumulate with every notification.
	size := 0
	for i := len(as) - 1; i >= 0; i-- {
		a := fromAlert(as[i])
		if n := proto.Size(a); len(out.Alerts) > 0 && size+n > store.MaxPageBytes {
			out.AlertsTruncated = true
			break
		} else {
			size += n
		}
		out.Alerts = append(out.Alerts, a)
	}
	return out
}

// fromActions lists the group actions as the API names them: the two
// silence durations are one SILENCE.
func fromActions(as []alert.GroupAction) []notifierv1.AlertGroup_Action {
	var out []notifierv1.AlertGroup_Action
	seen := map[notifierv1.AlertGroup_Action]bool{}
	for _, a := range as {
		var v notifierv1.AlertGroup_Action
		switch a {
		case alert.ActionSilence1h, alert.ActionSilence1d:
			v = notifierv1.AlertGroup_SILENCE
		case alert.ActionExpire:
			v = notifierv1.AlertGroup_EXPIRE_SILENCE
		case alert.ActionAck:
			v = notifierv1.AlertGroup_ACK
		default:
			continue
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
