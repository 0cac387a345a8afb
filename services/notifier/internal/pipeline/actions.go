package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alertmanager"
)

// Silencer creates and expires Alertmanager silences
// (*alertmanager.Client).
type Silencer interface {
	CreateSilence(ctx context.Context, s alertmanager.Silence) (string, error)
	ExpireSilence(ctx context.Context, id string) error
}

// Errors of the group actions.
var (
	// ErrSilenceUnavailable: the group cannot be silenced from here; the
	// error is a *SilenceRefusal that says why.
	ErrSilenceUnavailable = errors.New("silencing is not available for this group")
	// ErrNoSilence: there is no active silence to expire.
	ErrNoSilence = errors.New("the group has no active silence")
)

// Why a group cannot be silenced, in words for the person who asked.
const (
	SilenceNotConfigured = "not configured on this server: set ALERTMANAGER_URL"
	SilenceNotFromAM     = "this group did not come from Alertmanager"
	SilenceNoLabels      = "the group has no common labels to match"
	SilenceResolved      = "the group has resolved: nothing fires"
)

// SilenceRefusal says why a group cannot be silenced; it is
// ErrSilenceUnavailable.
type SilenceRefusal struct{ Reason string }

// Error is the reason.
func (e *SilenceRefusal) Error() string { return "cannot silence: " + e.Reason }

// Is makes errors.Is(err, ErrSilenceUnavailable) true.
func (e *SilenceRefusal) Is(target error) bool { return target == ErrSilenceUnavailable }

// Public is the reason, safe to show.
func (e *SilenceRefusal) Public() string { return e.Reason }

// SilenceBlocker is why g cannot be silenced from here, or nil when it
// can: the server has ALERTMANAGER_URL, the group came from Alertmanager
// with common labels to match, and it fires.
func (p *Pipeline) SilenceBlocker(g *alert.Group) *SilenceRefusal {
	switch {
	case p.silencer == nil:
		return &SilenceRefusal{SilenceNotConfigured}
	case g.Source != alert.SourceAlertmanager:
		return &SilenceRefusal{SilenceNotFromAM}
	case len(g.CommonLabels) == 0:
		return &SilenceRefusal{SilenceNoLabels}
	case g.Status == alert.GroupResolved:
		return &SilenceRefusal{SilenceResolved}
	}
	return nil
}

// AllowedActions are what may be done to g now, as its root's buttons
// offer them: Expire silence while a silence lasts, else Silence where it
// can act; Ack until someone acknowledged it; nothing once it resolved.
func (p *Pipeline) AllowedActions(g *alert.Group) []alert.GroupAction {
	if g.Status == alert.GroupResolved {
		return nil
	}
	var out []alert.GroupAction
	switch {
	case p.ActiveSilence(g) != nil && p.silencer != nil:
		out = append(out, alert.ActionExpire)
	case p.CanSilence(g):
		out = append(out, alert.ActionSilence1h, alert.ActionSilence1d)
	}
	if g.Ack == nil {
		out = append(out, alert.ActionAck)
	}
	return out
}

// CanSilence reports whether g can be silenced from here.
func (p *Pipeline) CanSilence(g *alert.Group) bool {
	return p.SilenceBlocker(g) == nil
}

// ActiveSilence is g's silence while it lasts, or nil.
func (p *Pipeline) ActiveSilence(g *alert.Group) *alert.Silence {
	if s := g.Silence; s != nil && !s.Expired && s.EndsAt.After(p.now()) {
		return s
	}
	return nil
}

// Ack records who acknowledged group id (the first acknowledgement
// stands: pressing twice changes nothing) and queues the edit of its root.
func (p *Pipeline) Ack(ctx context.Context, id, actor, by string) (*alert.Group, error) {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("acknowledging alert group: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := p.store.GetGroup(ctx, tx, id); err != nil {
		return nil, err
	}
	done, err := p.store.AckGroup(ctx, tx, id, alert.Ack{Actor: actor, By: by, At: p.now().UTC().Truncate(time.Microsecond)})
	if err != nil {
		return nil, err
	}
	if done {
		if _, err := p.river.InsertTx(ctx, tx, messageArgs{Type: messageRootEdit, GroupID: id}, nil); err != nil {
			return nil, fmt.Errorf("queueing the edit of alert group %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("acknowledging alert group %s: %w", id, err)
	}
	g, err := p.store.GetGroup(ctx, nil, id)
	if err == nil && done && p.escalation != nil && g.Ack != nil {
		p.escalation.Acknowledged(ctx, id, g.Ack.Actor, g.Ack.At)
	}
	return g, err
}

// Silence creates an Alertmanager silence for group id lasting d, with
// equality matchers on the group's common labels, created by actor, and
// records it; a group already silenced keeps its silence (pressing twice
// creates one). When Alertmanager is unreachable or refuses, nothing is
// recorded and the error (with Public) is returned.
func (p *Pipeline) Silence(ctx context.Context, id, actor, by string, d time.Duration) (*alert.Group, error) {
	// Two presses at once must not both find no silence and create two.
	p.silenceMu.Lock()
	defer p.silenceMu.Unlock()
	g, err := p.store.GetGroup(ctx, nil, id)
	if err != nil {
		return nil, err
	}
	if r := p.SilenceBlocker(g); r != nil {
		return nil, r
	}
	if p.ActiveSilence(g) != nil {
		return g, nil
	}
	now := p.now().UTC().Truncate(time.Microsecond)
	who := actor
	if by != "" && !strings.HasPrefix(actor, by) {
		who += " (" + by + ")"
	}
	sid, err := p.silencer.CreateSilence(ctx, alertmanager.Silence{
		Matchers:  alertmanager.EqualMatchers(g.CommonLabels),
		StartsAt:  now,
		EndsAt:    now.Add(d),
		CreatedBy: actor,
		Comment:   fmt.Sprintf("groundcrew: alert group %s (%s) silenced from Telegram by %s", oneLine(g.Title()), g.ID, who),
	})
	if err != nil {
		return nil, err
	}
	sil := alert.Silence{ID: sid, Actor: actor, By: by, EndsAt: now.Add(d), CreatedAt: now}
	if err := p.recordSilence(ctx, id, sil, now); err != nil {
		return nil, err
	}
	p.logger.InfoContext(ctx, "alert group silenced", "group_id", id, "silence_id", sid, "actor", actor, "until", sil.EndsAt)
	return p.store.GetGroup(ctx, nil, id)
}

// ExpireSilence expires the active silence of group id in Alertmanager
// and records it; without one it returns ErrNoSilence.
func (p *Pipeline) ExpireSilence(ctx context.Context, id, actor string) (*alert.Group, error) {
	p.silenceMu.Lock()
	defer p.silenceMu.Unlock()
	g, err := p.store.GetGroup(ctx, nil, id)
	if err != nil {
		return nil, err
	}
	if p.silencer == nil {
		return nil, &SilenceRefusal{SilenceNotConfigured}
	}
	sil := p.ActiveSilence(g)
	if sil == nil {
		return g, ErrNoSilence
	}
	if err := p.silencer.ExpireSilence(ctx, sil.ID); err != nil {
		return nil, err
	}
	now := p.now().UTC().Truncate(time.Microsecond)
	expired := *sil
	expired.Expired = true
	if err := p.recordSilence(ctx, id, expired, now); err != nil {
		return nil, err
	}
	p.logger.InfoContext(ctx, "alert group silence expired", "group_id", id, "silence_id", sil.ID, "actor", actor)
	return p.store.GetGroup(ctx, nil, id)
}

func (p *Pipeline) recordSilence(ctx context.Context, id string, sil alert.Silence, now time.Time) error {
	tx, err := p.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording a silence: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := p.store.SetGroupSilence(ctx, tx, id, sil, now); err != nil {
		return err
	}
	if _, err := p.river.InsertTx(ctx, tx, messageArgs{Type: messageRootEdit, GroupID: id}, nil); err != nil {
		return fmt.Errorf("queueing the edit of alert group %s: %w", id, err)
	}
	return tx.Commit()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
