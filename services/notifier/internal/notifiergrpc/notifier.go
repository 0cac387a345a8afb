// Package notifiergrpc is the gRPC adapter of the notifier service: it
// converts between the generated types and the domain, and alone maps domain
// errors to gRPC codes.
package notifiergrpc

import (
	"context"
	"log/slog"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// Alerts is the alert intake and store the handlers use (the pipeline).
type Alerts interface {
	Ingest(ctx context.Context, alerts []alert.Alert) ([]*alert.Alert, error)
	Get(ctx context.Context, id string) (*alert.Alert, error)
	List(ctx context.Context, q store.ListQuery) (store.Page[*alert.Alert], error)
}

// Updates handles Telegram bot updates (the chat agent).
type Updates interface {
	Handle(ctx context.Context, u chat.Update) (string, error)
}

// Deps are what the handlers serve; a nil one makes its RPCs answer
// Unimplemented.
type Deps struct {
	Alerts Alerts
	// Groups serves the alert group RPCs and takes Alertmanager and
	// Grafana payloads as group notifications; nil: alerts one by one.
	Groups  Groups
	Updates Updates
	// Messages serves SendMessage.
	Messages Messages
	// Watcher serves WatchAlerts.
	Watcher AlertWatcher
	// WebhookSecret is TELEGRAM_WEBHOOK_SECRET; when set, HandleTelegramUpdate
	// requires it in the x-telegram-bot-api-secret-token metadata.
	WebhookSecret string
	// WebhookDisabled refuses every webhook update (PermissionDenied): a
	// bot that polls for its updates has no webhook to forge.
	WebhookDisabled bool
	// SendChats are the chats SendMessage may target besides the default
	// (TELEGRAM_CHAT_ID, NOTIFIER_ROUTES and TELEGRAM_ALLOWED_CHATS).
	SendChats []string
	// Refusals counts refused webhook updates; nil counts nothing.
	Refusals chat.Refusals
	// Format is how FormatMessage renders when the request does not say
	// (the configured GROUNDING_MAX_SOURCES).
	Format format.Options
}

// NotifierService implements notifierv1.NotifierServiceServer.
type NotifierService struct {
	notifierv1.UnimplementedNotifierServiceServer
	logger   *slog.Logger
	format   format.Options
	alerts   Alerts
	groups   Groups
	updates  Updates
	messages Messages
	watcher  AlertWatcher
	secret   string
	disabled bool
	chats    map[string]bool
	refusals chat.Refusals
}

var _ notifierv1.NotifierServiceServer = (*NotifierService)(nil)

// NewNotifierService returns the NotifierService handlers.
func NewNotifierService(logger *slog.Logger, deps Deps) *NotifierService {
	s := &NotifierService{
		logger: logger, format: deps.Format, alerts: deps.Alerts, groups: deps.Groups, updates: deps.Updates, messages: deps.Messages,
		secret: deps.WebhookSecret, disabled: deps.WebhookDisabled, chats: map[string]bool{}, refusals: deps.Refusals,
		watcher: deps.Watcher,
	}
	for _, c := range deps.SendChats {
		s.chats[c] = true
	}
	if s.refusals == nil {
		s.refusals = chat.NopRefusals{}
	}
	return s
}

// FormatMessage renders the Telegram message for an alert and enrichment
// (the message contract) with the alert's own links from its metadata,
// without sending it; max_sources, when set,
// overrides the configured number of sources shown.
func (s *NotifierService) FormatMessage(ctx context.Context, req *notifierv1.FormatMessageRequest) (*notifierv1.FormatMessageResponse, error) {
	opt := s.format
	if req.MaxSources != nil {
		opt.MaxSources = int(req.GetMaxSources())
	}
	in := format.Input{Text: req.GetAlert().GetText()}
	// The alert's own links (runbook_url, dashboard_url, generatorURL, …)
	// in its metadata, shown as the pipeline shows them.
	for _, l := range alert.Links(&alert.Alert{Metadata: req.GetAlert().GetMetadata().AsMap()}) {
		in.Links = append(in.Links, format.Link{Label: l.Label, URL: l.URL})
	}
	res := format.FormatAlert(in, toEnrichment(req.GetEnrichment()), opt)
	if len(res.Cuts) > 0 {
		// Cuts never contain user text, so they are safe to log.
		s.logger.InfoContext(ctx, "message cut to fit Telegram's limits", "cuts", res.Cuts, "dropped_sources", res.DroppedSources)
	}
	return &notifierv1.FormatMessageResponse{
		Message:        fromMessage(res.Message),
		DroppedSources: int32(res.DroppedSources),
		Truncations:    res.Cuts,
	}, nil
}

func toEnrichment(e *notifierv1.Enrichment) *format.Enrichment {
	if e == nil {
		return nil
	}
	out := &format.Enrichment{Summary: e.GetSummary()}
	if e.Confidence != nil {
		c := e.GetConfidence()
		out.Confidence = &c
	}
	for _, c := range e.GetCitations() {
		out.Citations = append(out.Citations, format.Citation{Title: c.GetTitle(), Snippet: c.GetSnippet(), URL: c.GetUrl()})
	}
	return out
}

func fromMessage(m format.Message) *notifierv1.TelegramMessage {
	return &notifierv1.TelegramMessage{Text: m.Text, ParseMode: m.ParseMode, DisableWebPagePreview: m.DisableWebPagePreview}
}
