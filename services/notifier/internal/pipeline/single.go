package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
)

// deliverWorker runs deliverArgs jobs.
type deliverWorker struct {
	river.WorkerDefaults[deliverArgs]
	p *Pipeline
}

// Work takes one alert from where it stands to DELIVERED or FAILED. Every
// step's result is saved before the next starts, so a run after a crash
// resumes instead of starting over.
func (w *deliverWorker) Work(ctx context.Context, job *river.Job[deliverArgs]) error {
	p := w.p
	a, err := p.store.GetAlert(ctx, job.Args.AlertID)
	if err != nil {
		return fmt.Errorf("loading alert for delivery: %w", err)
	}
	switch a.Status {
	case alert.StatusDelivered, alert.StatusDuplicate, alert.StatusFailed:
		// Already done: River runs a job again after a crash.
		return nil
	}
	if a.DigestID != "" {
		return nil // a storm digest delivers it
	}
	if a.Status == alert.StatusReceived {
		// Claimed before anything else, so that a digest collecting the
		// chat's backlog cannot take it too.
		next := alert.StatusEnriching
		if a.Resolved() || a.Message != nil {
			next = alert.StatusDelivering
		}
		mine, err := p.store.ClaimForDelivery(ctx, a.ID, next, p.now().UTC())
		if err != nil {
			return err
		}
		if !mine {
			return nil // a storm digest took it
		}
		a.Status = next
		if err := p.maybeDigest(ctx, a.Destination); err != nil {
			p.logger.WarnContext(ctx, "collecting a storm digest failed; alerts go out one by one", "error", err)
		}
	}
	log := p.logger.With("alert_id", a.ID)

	if a.Message == nil {
		if err := p.render(ctx, a); err != nil {
			return err
		}
	}

	if a.Resolved() {
		// A resolution replies to its firing message where there is one.
		_, firing, err := p.store.FiringDelivery(ctx, a)
		if err != nil {
			return err
		}
		a.ReplyTo = firing
	}
	a.Attempts++
	a.Status = alert.StatusDelivering
	a.UpdatedAt = p.now().UTC()
	// The attempt is saved before sending so that a crash during the send
	// still counts it.
	if err := p.store.SaveProgress(ctx, a); err != nil {
		return err
	}
	receipt, err := p.deliverer.Deliver(ctx, a)
	a.UpdatedAt = p.now().UTC()
	if err != nil {
		a.Error = outbound.PublicError(err)
		p.metrics.deliveryErrors.WithLabelValues(errorCode(err)).Inc()
		// Only a plain retry can still succeed: the transport already
		// followed a migration and an alert is never an edit.
		return settle(err, job.Attempt, job.MaxAttempts, func(v senderr.Verdict, final bool) error {
			switch {
			case v.Action == senderr.RetryAfter:
				// A rate limit is no failure of the alert: wait as asked,
				// without using up an attempt.
				log.WarnContext(ctx, "delivery rate limited; waiting", "retry_after", v.Wait.String())
			case final:
				a.Status = alert.StatusFailed
				p.metrics.failed.WithLabelValues(a.Source).Inc()
				log.ErrorContext(ctx, "delivery failed for good", "attempts", a.Attempts, "action", v.Action.String(), "error", err)
			default:
				log.WarnContext(ctx, "delivery failed; will retry", "attempt", job.Attempt, "max_attempts", job.MaxAttempts, "error", err)
			}
			return p.store.SaveProgress(ctx, a)
		})
	}
	a.Status = alert.StatusDelivered
	a.Error = ""
	a.Destination = receipt.Destination
	a.DeliveryIDs = append(a.DeliveryIDs, receipt.MessageIDs...)
	a.DeliveredAt = a.UpdatedAt
	if err := p.store.SaveProgress(ctx, a); err != nil {
		return err
	}
	p.metrics.delivered.WithLabelValues(a.Source, destinationKind(receipt.Destination)).Inc()
	log.InfoContext(ctx, "alert delivered", "destination", receipt.Destination, "message_ids", receipt.MessageIDs)
	return nil
}

// render enriches (unless the alert is a resolution) and formats a, and
// saves the message.
func (p *Pipeline) render(ctx context.Context, a *alert.Alert) error {
	var res format.Result
	links := alert.Links(a)
	in := format.Input{Text: a.Text, Links: formatLinks(links)}
	if a.Resolved() {
		res = format.FormatAlert(in, nil, p.cfg.Format)
	} else {
		a.Status = alert.StatusEnriching
		a.UpdatedAt = p.now().UTC()
		if err := p.store.SaveProgress(ctx, a); err != nil {
			return err
		}
		e, err := p.enrich(ctx, a.Text, alert.EvidenceURLs(links))
		if err != nil {
			if ctx.Err() != nil {
				// The job itself is ending (shutdown): retry it rather than
				// deliver without enrichment.
				return fmt.Errorf("enriching alert %s: %w", a.ID, err)
			}
			a.EnrichmentError = p.enrichReason(err)
			p.logger.WarnContext(ctx, "enrichment failed; delivering the alert without it", "alert_id", a.ID, "error", err)
			res = format.FormatAlertFailed(in, a.EnrichmentError, p.cfg.Format)
		} else {
			a.GroundingMessageID = e.MessageID
			res = format.FormatAlert(in, &e, p.cfg.Format)
			if res.Unavailable != "" {
				// No source to show: the message carries the note, in the
				// enricher's words when it knows why.
				a.EnrichmentError = res.Unavailable
				if e.Unavailable != "" {
					a.EnrichmentError = e.Unavailable
					res = format.FormatAlertFailed(in, a.EnrichmentError, p.cfg.Format)
				}
				p.logger.InfoContext(ctx, "enrichment has no source to show; delivering the alert with a note", "alert_id", a.ID, "reason", a.EnrichmentError)
			}
		}
	}
	if len(res.Cuts) > 0 {
		// Cuts never contain the alert's text.
		p.logger.InfoContext(ctx, "message cut to fit Telegram's limits", "alert_id", a.ID, "cuts", res.Cuts, "dropped_sources", res.DroppedSources)
	}
	a.Message = &alert.Message{
		Text:                  res.Message.Text,
		Plain:                 res.Plain,
		ParseMode:             res.Message.ParseMode,
		DisableWebPagePreview: res.Message.DisableWebPagePreview,
	}
	a.Status = alert.StatusDelivering
	a.UpdatedAt = p.now().UTC()
	return p.store.SaveProgress(ctx, a)
}

// enrich asks the Enricher about text, starting from evidenceURLs when it
// takes them.
func (p *Pipeline) enrich(ctx context.Context, text string, evidenceURLs []string) (Enrichment, error) {
	if p.enricher == nil {
		return Enrichment{}, errNoEnricher
	}
	ectx, cancel := context.WithTimeout(ctx, p.cfg.EnrichTimeout)
	defer cancel()
	start := p.now()
	var (
		e   Enrichment
		err error
	)
	if le, ok := p.enricher.(LinkedEnricher); ok && len(evidenceURLs) > 0 {
		e, err = le.EnrichLinked(ectx, text, evidenceURLs)
	} else {
		e, err = p.enricher.Enrich(ectx, text)
	}
	outcome := "ok"
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (err != nil && ectx.Err() != nil):
		outcome = "timeout"
		err = fmt.Errorf("%w: %w", errEnrichTimeout, err)
	case err != nil:
		outcome = "error"
	}
	p.metrics.enrichSeconds.WithLabelValues(outcome).Observe(p.now().Sub(start).Seconds())
	return e, err
}

var (
	errNoEnricher    = errors.New("no enricher configured")
	errEnrichTimeout = errors.New("enrichment timed out")
)

// Reasons the pipeline itself gives for an enrichment that is unavailable;
// the Enricher's errors give theirs through Public.
const (
	ReasonTimedOut      = "search timed out"
	ReasonNotConfigured = "not configured"
	ReasonFailed        = "grounding failed"
)

// enrichReason is the one-line reason shown in the message, in words an
// on-call engineer understands; it never carries an internal error text.
func (p *Pipeline) enrichReason(err error) string {
	switch {
	case errors.Is(err, errEnrichTimeout):
		// Our deadline, whatever grounding was doing: searching is what
		// takes long.
		return ReasonTimedOut
	case errors.Is(err, errNoEnricher):
		return ReasonNotConfigured
	}
	var pub interface{ Public() string }
	if errors.As(err, &pub) {
		return pub.Public()
	}
	return ReasonFailed
}

// errorCode labels the delivery-errors metric.
func errorCode(err error) string {
	var c interface{ Code() string }
	if errors.As(err, &c) {
		return c.Code()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	return "other"
}

func destinationKind(d string) string {
	if d == "log" {
		return "log"
	}
	return "telegram"
}
