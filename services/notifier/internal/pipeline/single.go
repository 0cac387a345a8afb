package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
)

// alertDelivery is one alert by itself: enriched (unless it is a
// resolution), rendered once, sent through the Deliverer, and taken from
// where it stands to DELIVERED or FAILED. Every step's result is saved
// before the next starts, so a run after a crash resumes instead of
// starting over.
type alertDelivery struct {
	p  *Pipeline
	id string
	a  *alert.Alert
	// done: nothing (left) to send.
	done bool
}

func (d *alertDelivery) load(ctx context.Context) error {
	p := d.p
	a, err := p.store.GetAlert(ctx, d.id)
	if err != nil {
		return fmt.Errorf("loading alert for delivery: %w", err)
	}
	d.a = a
	switch {
	case a.Status == alert.StatusDelivered, a.Status == alert.StatusDuplicate, a.Status == alert.StatusFailed:
		// Already done: River runs a job again after a crash.
		d.done = true
	case a.DigestID != "":
		d.done = true // a storm digest delivers it
	case a.Status == alert.StatusReceived:
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
			d.done = true // a storm digest took it
			return nil
		}
		a.Status = next
		if err := p.maybeDigest(ctx, a.Destination); err != nil {
			p.logger.WarnContext(ctx, "collecting a storm digest failed; alerts go out one by one", "error", err)
		}
	}
	return nil
}

func (d *alertDelivery) render(ctx context.Context) (bool, error) {
	if d.done {
		return false, nil
	}
	p, a := d.p, d.a
	if a.Message == nil {
		if err := p.render(ctx, a); err != nil {
			return false, err
		}
	}
	if a.Resolved() {
		// A resolution replies to its firing message where there is one.
		_, firing, err := p.store.FiringDelivery(ctx, a)
		if err != nil {
			return false, err
		}
		a.ReplyTo = firing
	}
	return true, nil
}

func (d *alertDelivery) send(ctx context.Context) (Receipt, error) {
	p, a := d.p, d.a
	a.Attempts++
	a.Status = alert.StatusDelivering
	a.UpdatedAt = p.now().UTC()
	// The attempt is saved before sending so that a crash during the send
	// still counts it.
	if err := p.store.SaveProgress(ctx, a); err != nil {
		return Receipt{}, err
	}
	return p.deliverer.Deliver(ctx, a)
}

func (d *alertDelivery) delivered(ctx context.Context, r Receipt) error {
	p, a := d.p, d.a
	d.done = true
	a.UpdatedAt = p.now().UTC()
	a.Status = alert.StatusDelivered
	a.Error = ""
	a.Destination = r.Destination
	a.DeliveryIDs = append(a.DeliveryIDs, r.MessageIDs...)
	a.DeliveredAt = a.UpdatedAt
	if err := p.store.SaveProgress(ctx, a); err != nil {
		return err
	}
	p.metrics.delivered.WithLabelValues(a.Source, destinationKind(r.Destination)).Inc()
	p.logger.InfoContext(ctx, "alert delivered", "alert_id", a.ID, "destination", r.Destination, "message_ids", r.MessageIDs)
	return nil
}

// failed saves the attempt's error on the alert, and FAILED when the job
// ends. Only a plain retry can still succeed: the transport already
// followed a migration and an alert is never an edit.
func (d *alertDelivery) failed(ctx context.Context, f failure) error {
	p, a := d.p, d.a
	log := p.logger.With("alert_id", a.ID)
	a.UpdatedAt = p.now().UTC()
	a.Error = f.reason()
	switch {
	case f.verdict.Action == senderr.RetryAfter:
		// A rate limit is no failure of the alert: wait as asked, without
		// using up an attempt.
		log.WarnContext(ctx, "delivery rate limited; waiting", "retry_after", f.verdict.Wait.String())
	case f.final:
		a.Status = alert.StatusFailed
		p.metrics.failed.WithLabelValues(a.Source).Inc()
		log.ErrorContext(ctx, "delivery failed for good", "attempts", a.Attempts, "action", f.verdict.Action.String(), "error", f.err)
	default:
		log.WarnContext(ctx, "delivery failed; will retry", "attempt", f.attempt, "max_attempts", f.maxAttempts, "error", f.err)
	}
	return p.store.SaveProgress(ctx, a)
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
