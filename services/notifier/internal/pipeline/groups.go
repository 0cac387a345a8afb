package pipeline

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
	"github.com/groundcrew/groundcrew/services/notifier/internal/senderr"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// GroupTransport sends and edits the messages of alert groups. A Deliverer
// that also implements it makes Alertmanager and Grafana payloads group
// notifications (IngestGroup); without it their alerts go out one by one.
type GroupTransport interface {
	// Chat is where alerts with these labels go ("" when nowhere).
	Chat(labels map[string]string) string
	// SendGroupMessage sends m to chat, in reply to message replyTo when
	// it is not "", with buttons under it, and returns the message's id.
	SendGroupMessage(ctx context.Context, chat string, m alert.Message, replyTo string, buttons []outbound.Button) (string, error)
	// EditGroupMessage replaces the text and buttons of message id in chat.
	EditGroupMessage(ctx context.Context, chat, id string, m alert.Message, buttons []outbound.Button) error
}

// DefaultEnrichCacheTTL is how long a group's enrichment is reused for
// another group with the same alertname and common labels.
const DefaultEnrichCacheTTL = 30 * time.Minute

// IngestGroup stores the alerts of one Alertmanager or Grafana payload as a
// notification of their group (one per destination chat), and queues its
// delivery, all in one transaction; it returns the alerts as stored. The
// first notification of a group becomes its root message; later ones reply
// to the root. Repeats are recorded as DUPLICATE, as Ingest does, and a
// notification of repeats only is not sent. Whether a payload is delivered
// as a group is decided once, at intake (notifiergrpc): here it is, and a
// Deliverer that cannot send group messages is refused (errNoGroups).
func (p *Pipeline) IngestGroup(ctx context.Context, gp alert.GroupPayload, alerts []alert.Alert) ([]*alert.Alert, error) {
	if p.groups == nil {
		return nil, errNoGroups
	}
	return p.intake(ctx, alerts, func(tx *sql.Tx, out []*alert.Alert, routed []string, now time.Time) ([]river.InsertManyParams, error) {
		byChat := map[string][]*alert.Alert{}
		var chats []string
		for i, a := range out {
			chat := routed[i]
			if _, ok := byChat[chat]; !ok {
				chats = append(chats, chat)
			}
			byChat[chat] = append(byChat[chat], a)
		}
		var jobs []river.InsertManyParams
		for _, chat := range chats {
			job, err := p.notify(ctx, tx, gp, chat, byChat[chat], now)
			if err != nil {
				return nil, err
			}
			if job != nil {
				jobs = append(jobs, *job)
			}
		}
		return jobs, nil
	})
}

// notify stores members, the alerts of one payload routed to chat, as a
// notification of their group there (the group made or updated as the
// payload says), and returns the job that delivers it; nil when every
// member is a repeat.
func (p *Pipeline) notify(ctx context.Context, tx *sql.Tx, gp alert.GroupPayload, chat string, members []*alert.Alert, now time.Time) (*river.InsertManyParams, error) {
	if err := p.store.LockGroup(ctx, tx, gp.Source, gp.GroupKey, chat); err != nil {
		return nil, err
	}
	g, err := p.store.FindGroup(ctx, tx, gp.Source, gp.GroupKey, chat)
	if err != nil {
		return nil, err
	}
	isNew := g == nil
	if isNew {
		id, err := uuid.NewV7()
		if err != nil {
			return nil, fmt.Errorf("making a group id: %w", err)
		}
		g = &alert.Group{ID: id.String(), GroupKey: gp.GroupKey, Source: gp.Source, Destination: chat, CreatedAt: now}
	}
	// An upstream notification carries the whole group as it stands, so
	// its alerts are the group's state.
	g.GroupLabels, g.CommonLabels, g.CommonAnnotations = gp.GroupLabels, gp.CommonLabels, gp.CommonAnnotations
	if gp.ExternalURL != "" {
		g.ExternalURL = gp.ExternalURL
	}
	g.Tally(members)
	g.UpdatedAt = now
	if isNew {
		err = p.store.InsertGroup(ctx, tx, g)
	} else {
		err = p.store.UpdateGroup(ctx, tx, g)
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, a := range members {
		a.GroupID = g.ID
		if err := p.insertAlert(ctx, tx, a, now); err != nil {
			return nil, err
		}
		if a.Status == alert.StatusReceived {
			ids = append(ids, a.ID)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	seq, err := p.store.NextSeq(ctx, tx, g.ID)
	if err != nil {
		return nil, err
	}
	nid, err := uuid.NewV7()
	if err != nil {
		return nil, fmt.Errorf("making a notification id: %w", err)
	}
	n := &store.Notification{ID: nid.String(), GroupID: g.ID, Seq: seq, AlertIDs: ids, Status: alert.StatusReceived, ReceivedAt: now}
	if err := p.store.InsertNotification(ctx, tx, n); err != nil {
		return nil, err
	}
	return &river.InsertManyParams{Args: messageArgs{Type: messageNotification, NotificationID: n.ID}}, nil
}

// errNoGroups is IngestGroup on a pipeline whose Deliverer is no
// GroupTransport (the server refuses to start with one).
var errNoGroups = errors.New("the deliverer cannot send group messages")

// rootWait is how long a reply waits for its group's root to go out.
const rootWait = time.Second

// groupDelivery is a message of an alert group: a notification's (the
// root, enriched once, for the first; a reply to the root for later ones,
// followed by an edit of the root's title), or an edit of the root to show
// the group as it stands (after an ack, a silence, an escalation step).
// A notification's delivery marks its alerts DELIVERED with the message's
// id.
type groupDelivery struct {
	p *Pipeline
	// notificationID is the notification delivered; "" for an edit of
	// groupID's root.
	notificationID, groupID string

	n       *store.Notification
	g       *alert.Group
	all     []*alert.Alert // every alert of the group
	members []*alert.Alert // the notification's alerts
	form    groupForm
	msg     alert.Message
	buttons []outbound.Button
	// done: nothing (left) to send.
	done bool
}

// groupForm is which message of a group a groupDelivery sends.
type groupForm int

const (
	groupRoot groupForm = iota
	groupReply
	groupEdit
)

func (f groupForm) String() string {
	return [...]string{"root", "reply", "edit"}[f]
}

func (d *groupDelivery) load(ctx context.Context) error {
	p := d.p
	if d.notificationID == "" {
		return d.loadEdit(ctx)
	}
	n, err := p.store.GetNotification(ctx, d.notificationID)
	if err != nil {
		return fmt.Errorf("loading group notification: %w", err)
	}
	d.n = n
	if n.Status == alert.StatusDelivered || n.Status == alert.StatusFailed {
		d.done = true // River runs a job again after a crash
		return nil
	}
	if d.g, err = p.store.GetGroup(ctx, nil, n.GroupID); err != nil {
		return err
	}
	if d.all, err = p.store.GroupAlerts(ctx, d.g.ID); err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, id := range n.AlertIDs {
		mine[id] = true
	}
	for _, a := range d.all {
		if mine[a.ID] {
			d.members = append(d.members, a)
		}
	}
	d.form = groupReply
	if n.Seq == 0 {
		d.form = groupRoot
	} else if d.g.RootMessageID == "" {
		failed, err := p.store.RootFailed(ctx, d.g.ID)
		if err != nil {
			return err
		}
		if !failed {
			// The root is still on its way: a reply needs its id.
			return river.JobSnooze(rootWait)
		}
		// The root never went out (chat not found, …): this notification
		// becomes the group's root instead of waiting for ever.
		d.form = groupRoot
	}
	return nil
}

// loadEdit reads the group whose root is edited. A group whose root has
// not gone out yet is left alone: the root will show its state.
func (d *groupDelivery) loadEdit(ctx context.Context) error {
	p := d.p
	d.form, d.done = groupEdit, true
	if p.groups == nil {
		return nil
	}
	g, err := p.store.GetGroup(ctx, nil, d.groupID)
	if err != nil {
		return err
	}
	if g.RootMessageID == "" {
		return nil
	}
	all, err := p.store.GroupAlerts(ctx, g.ID)
	if err != nil {
		return err
	}
	d.g, d.all, d.done = g, all, false
	return nil
}

func (d *groupDelivery) render(ctx context.Context) (bool, error) {
	if d.done {
		return false, nil
	}
	p := d.p
	switch d.form {
	case groupReply:
		d.msg = p.renderReply(d.g, d.members)
	case groupRoot:
		// Enriched once: a retried job finds the group enriched.
		if err := p.enrichGroup(ctx, d.g, latest(d.all)); err != nil {
			return false, err
		}
		fallthrough
	case groupEdit:
		d.msg = p.renderRoot(ctx, d.g, latest(d.all))
		d.buttons = p.groupButtons(d.g)
	}
	return true, nil
}

func (d *groupDelivery) send(ctx context.Context) (Receipt, error) {
	p, g := d.p, d.g
	var (
		id  string
		err error
	)
	switch d.form {
	case groupRoot:
		id, err = p.groups.SendGroupMessage(ctx, g.Destination, d.msg, "", d.buttons)
	case groupReply:
		id, err = p.groups.SendGroupMessage(ctx, g.Destination, d.msg, g.RootMessageID, nil)
	case groupEdit:
		id, err = d.edit(ctx)
	}
	if err != nil {
		return Receipt{}, err
	}
	return Receipt{Destination: g.Destination, MessageIDs: []string{id}}, nil
}

// edit edits the root in place and returns its id. A root that can no
// longer be edited (deleted, too old, or its group became a supergroup) is
// replaced by a new one showing the group as it stands: its id is
// returned, and later replies and edits go to it.
func (d *groupDelivery) edit(ctx context.Context) (string, error) {
	p, g := d.p, d.g
	err := p.groups.EditGroupMessage(ctx, g.Destination, g.RootMessageID, d.msg, d.buttons)
	if err == nil || senderr.Classify(err).Action != senderr.SendNew {
		return g.RootMessageID, err
	}
	id, serr := p.groups.SendGroupMessage(ctx, g.Destination, d.msg, "", d.buttons)
	if serr != nil {
		return "", fmt.Errorf("sending a new root for alert group %s: %w (the old one: %w)", g.ID, serr, err)
	}
	p.logger.InfoContext(ctx, "the group's root message could not be edited; sent a new one", "group_id", g.ID,
		"old_message_id", g.RootMessageID, "message_id", id, "reason", outbound.PublicError(err))
	return id, nil
}

func (d *groupDelivery) delivered(ctx context.Context, r Receipt) error {
	p, g := d.p, d.g
	d.done = true
	id := r.MessageIDs[0]
	now := p.now().UTC()
	if d.form == groupEdit {
		if id == g.RootMessageID {
			return nil
		}
		return p.store.SetGroupRoot(ctx, g.ID, id, now)
	}
	root := d.form == groupRoot
	delivered := store.Delivered{
		Destination: g.Destination, DeliveryID: id, Root: root, Message: d.msg,
		GroundingMessageID: g.GroundingMessageID, EnrichmentError: g.EnrichmentError,
	}
	if err := p.store.DeliverNotification(ctx, d.n, delivered, now); err != nil {
		return err
	}
	p.metrics.groupMessages.WithLabelValues(d.form.String()).Inc()
	for _, a := range d.members {
		p.metrics.delivered.WithLabelValues(a.Source, destinationKind(g.Destination)).Inc()
	}
	log := p.logger.With("group_id", g.ID, "notification_id", d.n.ID)
	log.InfoContext(ctx, "alert group message delivered", "kind", d.form.String(), "message_id", id, "alerts", len(d.members))
	if root && p.escalation != nil {
		p.escalation.RootDelivered(ctx, g.ID)
	}
	if !root {
		// The root's title follows the group's state; a failed edit leaves
		// an old title, never a lost alert.
		if err := p.EditRoot(ctx, g.ID); err != nil {
			log.WarnContext(ctx, "editing the group's root message failed", "error", err)
		}
	}
	return nil
}

// failed marks the notification's alerts FAILED when the job ends; a
// root edit that ends only logs (the same edit would be refused again: a
// root that is gone was already replaced, or the attempts are used up).
func (d *groupDelivery) failed(ctx context.Context, f failure) error {
	p := d.p
	if !f.final {
		return nil
	}
	if d.form == groupEdit {
		p.logger.WarnContext(ctx, "editing the group's root message failed for good", "group_id", d.g.ID, "action", f.verdict.Action.String(), "error", f.err)
		return nil
	}
	if err := p.store.FailNotification(ctx, d.n, f.reason(), p.now().UTC()); err != nil {
		return err
	}
	for _, a := range d.members {
		p.metrics.failed.WithLabelValues(a.Source).Inc()
	}
	p.logger.ErrorContext(ctx, "group notification failed for good", "notification_id", d.n.ID, "action", f.verdict.Action.String(), "error", f.err)
	return nil
}

// latest is each alert's latest state (by fingerprint), in first-seen
// order, firing ones first.
func latest(all []*alert.Alert) []*alert.Alert {
	idx := map[string]int{}
	var out []*alert.Alert
	for _, a := range all {
		if i, ok := idx[a.Fingerprint]; ok {
			out[i] = a
			continue
		}
		idx[a.Fingerprint] = len(out)
		out = append(out, a)
	}
	firing := make([]*alert.Alert, 0, len(out))
	var resolved []*alert.Alert
	for _, a := range out {
		if a.Resolved() {
			resolved = append(resolved, a)
		} else {
			firing = append(firing, a)
		}
	}
	return append(firing, resolved...)
}

// enrichGroup enriches a group once: from the cache when a group with the
// same alertname and common labels was enriched within the cache TTL,
// otherwise with one grounding call. A group already enriched (a retried
// job) is left as it is.
func (p *Pipeline) enrichGroup(ctx context.Context, g *alert.Group, alerts []*alert.Alert) error {
	if g.Enrichment != nil || g.EnrichmentError != "" {
		return nil
	}
	now := p.now().UTC()
	key := g.CacheKey()
	if p.cfg.EnrichCacheTTL > 0 {
		cached, gid, err := p.store.CachedEnrichment(ctx, key, now.Add(-p.cfg.EnrichCacheTTL))
		if err != nil {
			return err
		}
		if cached != nil {
			g.Enrichment, g.GroundingMessageID = cached, gid
			p.metrics.enrichCacheHits.Inc()
			// The reused row's key stays the cache's entry; this one
			// does not renew it.
			return p.store.SaveGroupEnrichment(ctx, g, "", now)
		}
	}
	query := g.GroupQuery()
	if len(alerts) == 1 {
		// A group of one alert reads as that alert, as before groups.
		query = alerts[0].Text
	}
	e, err := p.enrich(ctx, query, alert.EvidenceURLs(alert.GroupLinks(alerts, maxGroupLinks)))
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("enriching alert group %s: %w", g.ID, err)
		}
		g.EnrichmentError = p.enrichReason(err)
		p.logger.WarnContext(ctx, "group enrichment failed; delivering without it", "group_id", g.ID, "error", err)
		return p.store.SaveGroupEnrichment(ctx, g, "", now)
	}
	g.Enrichment, g.GroundingMessageID = &e, e.MessageID
	if e.Unavailable != "" {
		g.EnrichmentError = e.Unavailable
		key = ""
	}
	return p.store.SaveGroupEnrichment(ctx, g, key, now)
}

// GroupView is what a group message shows of g and its alerts.
func GroupView(g *alert.Group, alerts []*alert.Alert) format.Group {
	v := format.Group{
		Title:        g.Title(),
		State:        GroupState(g),
		CommonLabels: g.CommonLabels,
		ExternalURL:  g.ExternalURL,
		GroupLabels:  g.GroupLabels,
	}
	if g.Source != alert.SourceAlertmanager {
		v.ExternalURL = ""
	}
	for _, a := range alerts {
		if r, ok := a.Metadata["receiver"].(string); ok && v.Receiver == "" {
			v.Receiver = r
		}
		v.Alerts = append(v.Alerts, format.GroupAlert{
			Resolved: a.Resolved(),
			Labels:   alert.Distinguishing(a, g.CommonLabels),
			Summary:  alert.Summary(a),
		})
	}
	return v
}

// GroupState are the state lines under a group's title: its silence and
// its acknowledgement.
func GroupState(g *alert.Group) []string {
	var out []string
	if s := g.Silence; s != nil && !s.Expired {
		out = append(out, "🔕 silenced by "+s.Actor+" until "+s.EndsAt.UTC().Format("15:04 MST"))
	}
	if a := g.Ack; a != nil {
		out = append(out, ackPrefix+a.Actor)
	}
	return out
}

// rootState is GroupState plus the escalation's line, which replaces the
// plain "acked by" line once the escalation knows how long the ack took.
func (p *Pipeline) rootState(ctx context.Context, g *alert.Group) []string {
	st := GroupState(g)
	if p.escalation == nil {
		return st
	}
	line := p.escalation.StatusLine(ctx, g.ID)
	if line == "" {
		return st
	}
	if g.Ack != nil && strings.HasPrefix(line, ackPrefix) {
		st = slices.DeleteFunc(st, func(s string) bool { return strings.HasPrefix(s, ackPrefix) })
	}
	return append(st, line)
}

// ackPrefix starts the state line of an acknowledged group.
const ackPrefix = "👀 acked by "

// maxGroupLinks is how many of its alerts' own links a group's root shows.
const maxGroupLinks = 4

// renderRoot renders a group's root message as it stands, with its
// alerts' own links (runbook first) under the text. A group of one
// alert keeps the single-alert layout (its title and state lines first when
// it has any).
func (p *Pipeline) renderRoot(ctx context.Context, g *alert.Group, alerts []*alert.Alert) alert.Message {
	var text string
	links := formatLinks(alert.GroupLinks(alerts, maxGroupLinks))
	state := p.rootState(ctx, g)
	if len(alerts) == 1 {
		text = alerts[0].Text
		if st := state; len(st) > 0 {
			first, rest, _ := strings.Cut(text, "\n")
			text = first + "\n" + strings.Join(st, "\n")
			if rest != "" {
				text += "\n" + rest
			}
		}
	} else {
		v := GroupView(g, alerts)
		v.State = state
		text = format.GroupText(v)
	}
	var res format.Result
	switch e := g.Enrichment; {
	case g.EnrichmentError != "" && (e == nil || e.Unavailable != ""):
		res = format.FormatAlertFailed(format.Input{Text: text, Links: links}, g.EnrichmentError, p.cfg.Format)
	case e != nil:
		res = format.FormatAlert(format.Input{Text: text, Links: links}, e, p.cfg.Format)
	default:
		res = format.FormatAlert(format.Input{Text: text, Links: links}, nil, p.cfg.Format)
	}
	if len(res.Cuts) > 0 {
		p.logger.InfoContext(ctx, "group message cut to fit Telegram's limits", "group_id", g.ID, "cuts", res.Cuts, "dropped_sources", res.DroppedSources)
	}
	if res.Unavailable == format.ReasonTooLong && g.EnrichmentError == "" {
		// The enrichment did not fit beside the alerts: the alerts this
		// root delivers record why, as a single alert's do.
		g.EnrichmentError = res.Unavailable
	}
	return toMessage(res)
}

// renderReply renders what a later notification changed: the group's
// current title, the counts, and the alerts it carries. Nothing is
// enriched again.
func (p *Pipeline) renderReply(g *alert.Group, members []*alert.Alert) alert.Message {
	firing, resolved := 0, 0
	for _, a := range members {
		if a.Resolved() {
			resolved++
		} else {
			firing++
		}
	}
	var changes []string
	if firing > 0 {
		changes = append(changes, strconv.Itoa(firing)+" firing")
	}
	if resolved > 0 {
		changes = append(changes, strconv.Itoa(resolved)+" resolved")
	}
	v := GroupView(g, latest(members))
	v.State, v.CommonLabels, v.ExternalURL = nil, nil, ""
	v.Changes = strings.Join(changes, ", ")
	return toMessage(format.Format(format.GroupText(v), nil, p.cfg.Format))
}

func toMessage(res format.Result) alert.Message {
	return alert.Message{Text: res.Message.Text, Plain: res.Plain, ParseMode: res.Message.ParseMode, DisableWebPagePreview: res.Message.DisableWebPagePreview}
}

// Labels of the group buttons.
const (
	ButtonSilence1h = "🔕 Silence 1h"
	ButtonSilence1d = "🔕 Silence 24h"
	ButtonAck       = "👀 Ack"
	ButtonExpire    = "Expire silence"
)

// groupButtons are the buttons under a firing group's root: Silence 1h and
// 24h when it can be silenced (Expire silence while a silence lasts), and
// Ack until someone acknowledged it. A resolved group has none.
func (p *Pipeline) groupButtons(g *alert.Group) []outbound.Button {
	if g.Status == alert.GroupResolved {
		return nil
	}
	var out []outbound.Button
	switch {
	case p.ActiveSilence(g) != nil:
		out = append(out, outbound.Button{Text: ButtonExpire, CallbackData: alert.GroupCallbackData(g.ID, alert.ActionExpire)})
	case p.CanSilence(g):
		out = append(out,
			outbound.Button{Text: ButtonSilence1h, CallbackData: alert.GroupCallbackData(g.ID, alert.ActionSilence1h)},
			outbound.Button{Text: ButtonSilence1d, CallbackData: alert.GroupCallbackData(g.ID, alert.ActionSilence1d)})
	}
	if g.Ack == nil {
		out = append(out, outbound.Button{Text: ButtonAck, CallbackData: alert.GroupCallbackData(g.ID, alert.ActionAck)})
	}
	return out
}

// EditRoot re-renders a group's root message from its stored state (title,
// counts, silence, ack, enrichment) and edits it in place, as a root edit's
// message job does; a failed edit is returned. A group whose root has not
// gone out yet is left alone: the root will show the state.
func (p *Pipeline) EditRoot(ctx context.Context, groupID string) error {
	return p.run(ctx, &groupDelivery{p: p, groupID: groupID}, func(err error) error { return err })
}

// GetGroup returns a stored group and its alerts' latest states, read as
// of one moment (alerts DELIVERED come with the root they went out under).
func (p *Pipeline) GetGroup(ctx context.Context, id string) (*alert.Group, []*alert.Alert, error) {
	return p.store.GroupWithAlerts(ctx, id)
}

// ListGroups returns one page of stored groups, newest first.
func (p *Pipeline) ListGroups(ctx context.Context, q store.GroupListQuery) (store.Page[*alert.Group], error) {
	return p.store.ListGroups(ctx, q)
}
