package notifiergrpc

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// defaultPageSize is ListAlerts' page size when the request says 0.
const defaultPageSize = 20

// IngestAlert stores a generic alert and answers once it is durably stored.
func (s *NotifierService) IngestAlert(ctx context.Context, req *notifierv1.IngestAlertRequest) (*notifierv1.IngestAlertResponse, error) {
	if s.alerts == nil {
		return nil, status.Error(codes.Unimplemented, "alert intake is not configured")
	}
	a, err := alert.Generic(req.GetText(), req.GetMetadata().AsMap())
	if err != nil {
		return nil, s.alertError(ctx, err, "building alert")
	}
	stored, err := s.alerts.Ingest(ctx, []alert.Alert{a})
	if err != nil {
		return nil, s.alertError(ctx, err, "storing alert")
	}
	return &notifierv1.IngestAlertResponse{Alert: fromAlert(stored[0])}, nil
}

// IngestAlertmanager stores one alert per alert of an Alertmanager webhook.
func (s *NotifierService) IngestAlertmanager(ctx context.Context, req *notifierv1.IngestAlertmanagerRequest) (*notifierv1.IngestAlertmanagerResponse, error) {
	if s.alerts == nil {
		return nil, status.Error(codes.Unimplemented, "alert intake is not configured")
	}
	payload := toAlertmanagerPayload(req)
	as, err := alert.FromAlertmanager(payload)
	if err != nil {
		return nil, s.alertError(ctx, err, "reading Alertmanager payload")
	}
	gp, grouped := alert.AlertmanagerGroup(payload)
	stored, err := s.ingestUpstream(ctx, gp, grouped, as)
	if err != nil {
		return nil, s.alertError(ctx, err, "storing Alertmanager alerts")
	}
	return &notifierv1.IngestAlertmanagerResponse{Alerts: fromAlerts(stored)}, nil
}

// IngestGrafana stores one alert per alert of a Grafana webhook.
func (s *NotifierService) IngestGrafana(ctx context.Context, req *notifierv1.IngestGrafanaRequest) (*notifierv1.IngestGrafanaResponse, error) {
	if s.alerts == nil {
		return nil, status.Error(codes.Unimplemented, "alert intake is not configured")
	}
	payload := toGrafanaPayload(req)
	as, err := alert.FromGrafana(payload)
	if err != nil {
		return nil, s.alertError(ctx, err, "reading Grafana payload")
	}
	gp, grouped := alert.GrafanaGroup(payload)
	stored, err := s.ingestUpstream(ctx, gp, grouped, as)
	if err != nil {
		return nil, s.alertError(ctx, err, "storing Grafana alerts")
	}
	return &notifierv1.IngestGrafanaResponse{Alerts: fromAlerts(stored)}, nil
}

// GetAlert returns a stored alert.
func (s *NotifierService) GetAlert(ctx context.Context, req *notifierv1.GetAlertRequest) (*notifierv1.GetAlertResponse, error) {
	if s.alerts == nil {
		return nil, status.Error(codes.Unimplemented, "alert store is not configured")
	}
	a, err := s.alerts.Get(ctx, req.GetId())
	if err != nil {
		return nil, s.alertError(ctx, err, "reading alert")
	}
	return &notifierv1.GetAlertResponse{Alert: fromAlert(a)}, nil
}

// ListAlerts lists stored alerts, newest first.
func (s *NotifierService) ListAlerts(ctx context.Context, req *notifierv1.ListAlertsRequest) (*notifierv1.ListAlertsResponse, error) {
	if s.alerts == nil {
		return nil, status.Error(codes.Unimplemented, "alert store is not configured")
	}
	q := store.ListQuery{PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken()}
	if q.PageSize <= 0 {
		q.PageSize = defaultPageSize
	}
	if req.GetStatus() != notifierv1.Alert_STATUS_UNSPECIFIED {
		q.Status = alert.Status(req.GetStatus().String())
	}
	if req.GetReceivedAfter() != nil {
		q.ReceivedAfter = req.GetReceivedAfter().AsTime()
	}
	q.GroupID = req.GetGroupId()
	page, err := s.alerts.List(ctx, q)
	if err != nil {
		return nil, s.alertError(ctx, err, "listing alerts")
	}
	return &notifierv1.ListAlertsResponse{Alerts: fromAlerts(page.Items), NextPageToken: page.Next, SizeLimited: page.SizeLimited}, nil
}

// alertError maps the domain's errors to gRPC codes.
func (s *NotifierService) alertError(ctx context.Context, err error, doing string) error {
	if fe, ok := errors.AsType[*alert.FieldError](err); ok {
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: fe.Field, Description: fe.Description})
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return status.Error(codes.NotFound, "alert not found")
	case errors.Is(err, store.ErrBadPageToken):
		return grpcserver.FieldViolations(grpcserver.FieldViolation{Field: "page_token", Description: "not a token from a previous page"})
	}
	return grpcserver.InternalError(ctx, s.logger, err, doing)
}

func toAlertmanagerPayload(r *notifierv1.IngestAlertmanagerRequest) alert.AlertmanagerPayload {
	p := alert.AlertmanagerPayload{
		Version: r.GetVersion(), GroupKey: r.GetGroupKey(), TruncatedAlerts: r.GetTruncatedAlerts(),
		Status: r.GetStatus(), Receiver: r.GetReceiver(), GroupLabels: r.GetGroupLabels(),
		CommonLabels: r.GetCommonLabels(), CommonAnnotations: r.GetCommonAnnotations(), ExternalURL: r.GetExternalUrl(),
	}
	for _, a := range r.GetAlerts() {
		p.Alerts = append(p.Alerts, alert.AlertmanagerAlert{
			Status: a.GetStatus(), Labels: a.GetLabels(), Annotations: a.GetAnnotations(),
			StartsAt: toTime(a.GetStartsAt()), EndsAt: toTime(a.GetEndsAt()),
			GeneratorURL: a.GetGeneratorUrl(), Fingerprint: a.GetFingerprint(),
		})
	}
	return p
}

func toGrafanaPayload(r *notifierv1.IngestGrafanaRequest) alert.GrafanaPayload {
	p := alert.GrafanaPayload{
		Receiver: r.GetReceiver(), Status: r.GetStatus(), OrgID: r.GetOrgId(), GroupLabels: r.GetGroupLabels(),
		CommonLabels: r.GetCommonLabels(), CommonAnnotations: r.GetCommonAnnotations(), ExternalURL: r.GetExternalUrl(),
		Version: r.GetVersion(), GroupKey: r.GetGroupKey(), TruncatedAlerts: r.GetTruncatedAlerts(),
		Title: r.GetTitle(), State: r.GetState(), Message: r.GetMessage(),
	}
	for _, a := range r.GetAlerts() {
		ga := alert.GrafanaAlert{
			AlertmanagerAlert: alert.AlertmanagerAlert{
				Status: a.GetStatus(), Labels: a.GetLabels(), Annotations: a.GetAnnotations(),
				StartsAt: toTime(a.GetStartsAt()), EndsAt: toTime(a.GetEndsAt()),
				GeneratorURL: a.GetGeneratorUrl(), Fingerprint: a.GetFingerprint(),
			},
			SilenceURL:   a.GetSilenceUrl(),
			DashboardURL: a.GetDashboardUrl(), PanelURL: a.GetPanelUrl(), ValueString: a.GetValueString(), ImageURL: a.GetImageUrl(),
		}
		if a.GetValues() != nil {
			ga.Values = a.GetValues().AsMap()
		}
		p.Alerts = append(p.Alerts, ga)
	}
	return p
}

func toTime(ts *timestamppb.Timestamp) (t time.Time) {
	if ts == nil {
		return t
	}
	return ts.AsTime()
}

func fromAlerts(as []*alert.Alert) []*notifierv1.Alert {
	out := make([]*notifierv1.Alert, 0, len(as))
	for _, a := range as {
		out = append(out, fromAlert(a))
	}
	return out
}

func fromAlert(a *alert.Alert) *notifierv1.Alert {
	out := &notifierv1.Alert{
		Id:                 a.ID,
		Text:               a.Text,
		Status:             fromStatus(a.Status),
		Attempts:           int32(a.Attempts),
		Error:              a.Error,
		TextTruncated:      a.TextTruncated,
		Source:             a.Source,
		AlertStatus:        a.AlertStatus,
		Fingerprint:        a.Fingerprint,
		DuplicateOf:        a.DuplicateOf,
		GroundingMessageId: a.GroundingMessageID,
		EnrichmentError:    a.EnrichmentError,
		DeliveryIds:        a.DeliveryIDs,
		Destination:        a.Destination,
		ReceivedAt:         fromTime(a.ReceivedAt),
		UpdateTime:         fromTime(a.UpdatedAt),
		DeliverTime:        fromTime(a.DeliveredAt),
		GroupId:            a.GroupID,
	}
	if md, err := structpb.NewStruct(a.Metadata); err == nil {
		out.Metadata = md
	}
	if a.Message != nil {
		out.Message = &notifierv1.TelegramMessage{
			Text: a.Message.Text, ParseMode: a.Message.ParseMode, DisableWebPagePreview: a.Message.DisableWebPagePreview,
		}
	}
	return out
}

func fromStatus(s alert.Status) notifierv1.Alert_Status {
	return notifierv1.Alert_Status(notifierv1.Alert_Status_value[string(s)])
}

func fromTime(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}
