package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

// Notification is one notification of an alert group: Seq 0 is the root
// message, later ones reply to it.
type Notification struct {
	ID          string
	GroupID     string
	Seq         int
	AlertIDs    []string
	Status      alert.Status // StatusReceived until delivered, then StatusDelivered
	DeliveryID  string
	ReceivedAt  time.Time
	DeliveredAt time.Time
}

// LockGroup makes intake transactions of one group take turns, so that two
// instances on one PostgreSQL never both find no group and open two roots
// (the table's UNIQUE key is the backstop). On SQLite, whose intake
// transactions hold the write lock from BEGIN, it does nothing.
func (s *Store) LockGroup(ctx context.Context, tx Querier, source, groupKey, destination string) error {
	if s.db.Dialect != sqlstore.Postgres {
		return nil
	}
	key := "notifier/group/" + strconv.Quote(source) + "/" + strconv.Quote(groupKey) + "/" + strconv.Quote(destination)
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, key); err != nil {
		return fmt.Errorf("locking alert group for intake: %w", err)
	}
	return nil
}

const groupColumns = `id, group_key, source, destination, root_message_id, status, firing_count, resolved_count,
	group_labels, common_labels, common_annotations, external_url, enrichment, grounding_message_id, enrichment_error,
	silence_id, silence_actor, silence_by, silence_ends_at, silence_created_at, silence_expired,
	ack_actor, ack_by, ack_at, created_at, updated_at`

// FindGroup returns the group of source, groupKey and destination, or nil
// when there is none.
func (s *Store) FindGroup(ctx context.Context, q Querier, source, groupKey, destination string) (*alert.Group, error) {
	row := q.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM notifier_alert_groups
		WHERE source = $1 AND group_key = $2 AND destination = $3`, source, groupKey, destination)
	g, err := scanGroup(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("looking up alert group: %w", err)
	}
	return g, nil
}

// intakeColumns are the columns of a group that UpdateGroup writes.
var intakeColumns = map[string]bool{
	"status": true, "firing_count": true, "resolved_count": true,
	"group_labels": true, "common_labels": true, "common_annotations": true,
	"external_url": true, "updated_at": true,
}

// groupValues are g's columns in groupColumns order.
func groupValues(g *alert.Group) ([]any, error) {
	gl, err1 := json.Marshal(nonNilLabels(g.GroupLabels))
	cl, err2 := json.Marshal(nonNilLabels(g.CommonLabels))
	ca, err3 := json.Marshal(nonNilLabels(g.CommonAnnotations))
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, fmt.Errorf("encoding labels of alert group %s: %w", g.ID, err)
	}
	enrichment, err := encodeEnrichment(g.Enrichment)
	if err != nil {
		return nil, fmt.Errorf("encoding enrichment of alert group %s: %w", g.ID, err)
	}
	var sil alert.Silence
	if g.Silence != nil {
		sil = *g.Silence
	}
	var ack alert.Ack
	if g.Ack != nil {
		ack = *g.Ack
	}
	return []any{g.ID, g.GroupKey, g.Source, g.Destination, g.RootMessageID, string(g.Status), g.Firing, g.Resolved,
		string(gl), string(cl), string(ca), g.ExternalURL, enrichment, g.GroundingMessageID, g.EnrichmentError,
		sil.ID, sil.Actor, sil.By, sqlstore.Micros(sil.EndsAt), sqlstore.Micros(sil.CreatedAt), sil.Expired,
		ack.Actor, ack.By, sqlstore.Micros(ack.At), sqlstore.Micros(g.CreatedAt), sqlstore.Micros(g.UpdatedAt)}, nil
}

// InsertGroup stores a new group through q.
func (s *Store) InsertGroup(ctx context.Context, q Querier, g *alert.Group) error {
	vals, err := groupValues(g)
	if err != nil {
		return err
	}
	ph := make([]string, len(vals))
	for i := range ph {
		ph[i] = "$" + strconv.Itoa(i+1)
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO notifier_alert_groups (`+groupColumns+`) VALUES (`+strings.Join(ph, ", ")+`)`, vals...); err != nil {
		return fmt.Errorf("inserting alert group %s: %w", g.ID, err)
	}
	return nil
}

// UpdateGroup writes what intake knows of g through q: its status, counts,
// labels, annotations and external URL, and its update time. The root
// message, enrichment, silence and acknowledgement are left as stored:
// they are written by their own statements (DeliverNotification,
// SaveGroupEnrichment, SetGroupSilence, AckGroup), which do not wait for
// intake, so writing back the g that intake read would undo one that
// committed in between (on PostgreSQL, a root delivered while later
// notifications of its group came in was lost, and their replies waited
// for a root for ever).
func (s *Store) UpdateGroup(ctx context.Context, q Querier, g *alert.Group) error {
	vals, err := groupValues(g)
	if err != nil {
		return err
	}
	cols := strings.Split(groupColumns, ",")
	var set []string
	// PostgreSQL wants a type for every parameter, so only the columns
	// written are passed.
	args := []any{g.ID}
	for i, c := range cols {
		c = strings.TrimSpace(c)
		if !intakeColumns[c] {
			continue
		}
		args = append(args, vals[i])
		set = append(set, c+" = $"+strconv.Itoa(len(args)))
	}
	res, err := q.ExecContext(ctx, `UPDATE notifier_alert_groups SET `+strings.Join(set, ", ")+` WHERE id = $1`, args...)
	if err != nil {
		return fmt.Errorf("saving alert group %s: %w", g.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("saving alert group %s: %w", g.ID, ErrNotFound)
	}
	return nil
}

// GetGroup returns the group with id through q, or ErrNotFound.
func (s *Store) GetGroup(ctx context.Context, q Querier, id string) (*alert.Group, error) {
	if q == nil {
		q = s.db
	}
	g, err := scanGroup(q.QueryRowContext(ctx, `SELECT `+groupColumns+` FROM notifier_alert_groups WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("alert group %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading alert group %q: %w", id, err)
	}
	return g, nil
}

// GroupListQuery filters and pages ListGroups.
type GroupListQuery struct {
	Status    alert.GroupStatus // empty: any
	PageSize  int               // 1..100
	PageToken string            // from the previous page
}

// ListGroups returns one page of groups, newest first.
func (s *Store) ListGroups(ctx context.Context, q GroupListQuery) (Page[*alert.Group], error) {
	return listNewest(ctx, s, keyset[*alert.Group]{
		what: "alert groups", table: "notifier_alert_groups", columns: groupColumns, timeColumn: "created_at",
		filters: func(arg func(any) string) (where []string) {
			if q.Status != "" {
				where = append(where, "status = "+arg(string(q.Status)))
			}
			return where
		},
		scan: scanGroup,
		key:  func(g *alert.Group) (time.Time, string) { return g.CreatedAt, g.ID },
		size: groupSize,
	}, q.PageSize, q.PageToken)
}

// groupSize is about what a group weighs in a response, without its
// alerts (the list leaves them out).
func groupSize(g *alert.Group) int {
	n := len(g.GroupKey) + len(g.ExternalURL) + len(g.EnrichmentError) + 512
	for _, m := range []map[string]string{g.GroupLabels, g.CommonLabels, g.CommonAnnotations} {
		for k, v := range m {
			n += len(k) + len(v)
		}
	}
	return n
}

func scanGroup(r scanner) (*alert.Group, error) {
	var (
		g                                alert.Group
		sil                              alert.Silence
		ack                              alert.Ack
		status, gl, cl, ca, enrichment   string
		silEnds, silCreated, ackAt, c, u int64
	)
	if err := r.Scan(&g.ID, &g.GroupKey, &g.Source, &g.Destination, &g.RootMessageID, &status, &g.Firing, &g.Resolved,
		&gl, &cl, &ca, &g.ExternalURL, &enrichment, &g.GroundingMessageID, &g.EnrichmentError,
		&sil.ID, &sil.Actor, &sil.By, &silEnds, &silCreated, &sil.Expired,
		&ack.Actor, &ack.By, &ackAt, &c, &u); err != nil {
		return nil, err
	}
	g.Status = alert.GroupStatus(status)
	for _, m := range []struct {
		raw string
		dst *map[string]string
	}{{gl, &g.GroupLabels}, {cl, &g.CommonLabels}, {ca, &g.CommonAnnotations}} {
		if err := json.Unmarshal([]byte(m.raw), m.dst); err != nil {
			return nil, fmt.Errorf("decoding labels of alert group %s: %w", g.ID, err)
		}
	}
	e, err := decodeEnrichment(enrichment)
	if err != nil {
		return nil, fmt.Errorf("decoding enrichment of alert group %s: %w", g.ID, err)
	}
	g.Enrichment = e
	if sil.ID != "" {
		sil.EndsAt, sil.CreatedAt = sqlstore.FromMicros(silEnds), sqlstore.FromMicros(silCreated)
		g.Silence = &sil
	}
	if ack.Actor != "" || ackAt != 0 {
		ack.At = sqlstore.FromMicros(ackAt)
		g.Ack = &ack
	}
	g.CreatedAt, g.UpdatedAt = sqlstore.FromMicros(c), sqlstore.FromMicros(u)
	return &g, nil
}

// NextSeq is the sequence number the group's next notification takes.
func (s *Store) NextSeq(ctx context.Context, q Querier, groupID string) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), -1) + 1 FROM notifier_group_notifications WHERE group_id = $1`, groupID).Scan(&n); err != nil {
		return 0, fmt.Errorf("numbering a notification of alert group %s: %w", groupID, err)
	}
	return n, nil
}

// InsertNotification stores a group notification through q.
func (s *Store) InsertNotification(ctx context.Context, q Querier, n *Notification) error {
	ids, err := json.Marshal(nonNilSlice(n.AlertIDs))
	if err != nil {
		return fmt.Errorf("encoding alert ids of notification %s: %w", n.ID, err)
	}
	_, err = q.ExecContext(ctx, `INSERT INTO notifier_group_notifications
		(id, group_id, seq, alert_ids, status, delivery_id, received_at, delivered_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		n.ID, n.GroupID, n.Seq, string(ids), string(n.Status), n.DeliveryID, sqlstore.Micros(n.ReceivedAt), sqlstore.Micros(n.DeliveredAt))
	if err != nil {
		return fmt.Errorf("inserting notification %s: %w", n.ID, err)
	}
	return nil
}

// GetNotification returns the notification with id, or ErrNotFound.
func (s *Store) GetNotification(ctx context.Context, id string) (*Notification, error) {
	var (
		n           Notification
		ids, status string
		recv, deliv int64
	)
	err := s.db.QueryRowContext(ctx, `SELECT id, group_id, seq, alert_ids, status, delivery_id, received_at, delivered_at
		FROM notifier_group_notifications WHERE id = $1`, id).Scan(&n.ID, &n.GroupID, &n.Seq, &ids, &status, &n.DeliveryID, &recv, &deliv)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("notification %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading notification %q: %w", id, err)
	}
	if err := json.Unmarshal([]byte(ids), &n.AlertIDs); err != nil {
		return nil, fmt.Errorf("decoding alert ids of notification %s: %w", id, err)
	}
	n.Status = alert.Status(status)
	n.ReceivedAt, n.DeliveredAt = sqlstore.FromMicros(recv), sqlstore.FromMicros(deliv)
	return &n, nil
}

// GroupAlerts returns every alert stored for the group, oldest first.
func (s *Store) GroupAlerts(ctx context.Context, groupID string) ([]*alert.Alert, error) {
	return s.groupAlerts(ctx, s.db, groupID)
}

// GroupWithAlerts returns a group and every alert stored for it, oldest
// first, as of one moment: a delivery records the group's root and marks
// its alerts DELIVERED in one transaction, and a reader must not see the
// alerts delivered by a commit that the group row, read a moment earlier,
// does not show.
func (s *Store) GroupWithAlerts(ctx context.Context, id string) (*alert.Group, []*alert.Alert, error) {
	// SQLite has one connection, so any transaction is a snapshot; a
	// PostgreSQL transaction needs REPEATABLE READ to read its statements
	// from one snapshot.
	opts := &sql.TxOptions{ReadOnly: true}
	if s.db.Dialect == sqlstore.Postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := s.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, nil, fmt.Errorf("reading alert group %q: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	g, err := s.GetGroup(ctx, tx, id)
	if err != nil {
		return nil, nil, err
	}
	alerts, err := s.groupAlerts(ctx, tx, id)
	if err != nil {
		return nil, nil, err
	}
	return g, alerts, nil
}

func (s *Store) groupAlerts(ctx context.Context, q Querier, groupID string) ([]*alert.Alert, error) {
	return queryAlerts(ctx, q, "alerts of group "+groupID, `SELECT `+alertColumns+` FROM notifier_alerts
		WHERE group_id = $1 ORDER BY received_at, id`, groupID)
}

// Delivered says how a group notification went out.
type Delivered struct {
	Destination string
	DeliveryID  string
	Root        bool          // the group's root message: recorded on the group
	Message     alert.Message // what was sent, recorded on each alert
	// GroundingMessageID and EnrichmentError are the group's, recorded on
	// each alert.
	GroundingMessageID, EnrichmentError string
}

// DeliverNotification records, in one transaction, that the notification
// went out as d says: the notification and each of its alerts not yet
// DELIVERED become DELIVERED with that delivery id and message; a root
// also records the group's root message id.
func (s *Store) DeliverNotification(ctx context.Context, n *Notification, d Delivered, at time.Time) error {
	destination, deliveryID, root := d.Destination, d.DeliveryID, d.Root
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording delivery of notification %s: %w", n.ID, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `UPDATE notifier_group_notifications SET status = $2, delivery_id = $3, delivered_at = $4 WHERE id = $1`,
		n.ID, string(alert.StatusDelivered), deliveryID, sqlstore.Micros(at)); err != nil {
		return fmt.Errorf("recording delivery of notification %s: %w", n.ID, err)
	}
	if root {
		if _, err := tx.ExecContext(ctx, `UPDATE notifier_alert_groups SET root_message_id = $2, updated_at = $3 WHERE id = $1`,
			n.GroupID, deliveryID, sqlstore.Micros(at)); err != nil {
			return fmt.Errorf("recording the root of alert group %s: %w", n.GroupID, err)
		}
	}
	ids, err := json.Marshal([]string{deliveryID})
	if err != nil {
		return err
	}
	const chunk = 500
	for start := 0; start < len(n.AlertIDs); start += chunk {
		part := n.AlertIDs[start:min(start+chunk, len(n.AlertIDs))]
		args := []any{string(alert.StatusDelivered), destination, string(ids), sqlstore.Micros(at),
			d.Message.Text, d.Message.Plain, d.Message.ParseMode, d.Message.DisableWebPagePreview, d.GroundingMessageID, d.EnrichmentError}
		ph := make([]string, len(part))
		for i, id := range part {
			args = append(args, id)
			ph[i] = "$" + strconv.Itoa(len(args))
		}
		if _, err := tx.ExecContext(ctx, `UPDATE notifier_alerts SET status = $1, destination = $2, delivery_ids = $3,
			delivered_at = $4, updated_at = $4, attempts = attempts + 1, error = '',
			message_text = $5, message_plain = $6, message_parse_mode = $7, message_disable_preview = $8,
			grounding_message_id = $9, enrichment_error = $10
			WHERE status <> $1 AND id IN (`+strings.Join(ph, ", ")+`)`, args...); err != nil {
			return fmt.Errorf("recording delivery of the alerts of notification %s: %w", n.ID, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording delivery of notification %s: %w", n.ID, err)
	}
	s.alertsChanged()
	return nil
}

// CachedEnrichment returns the enrichment and grounding message id of the
// latest group with enrichKey enriched at or after since, or nil when
// there is none.
func (s *Store) CachedEnrichment(ctx context.Context, enrichKey string, since time.Time) (*alert.Enrichment, string, error) {
	var raw, groundingMessageID string
	err := s.db.QueryRowContext(ctx, `SELECT enrichment, grounding_message_id FROM notifier_alert_groups
		WHERE enrich_key = $1 AND enriched_at >= $2 AND enrichment <> '' AND grounding_message_id <> ''
		ORDER BY enriched_at DESC LIMIT 1`, enrichKey, sqlstore.Micros(since)).Scan(&raw, &groundingMessageID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("looking up cached enrichment: %w", err)
	}
	e, err := decodeEnrichment(raw)
	if err != nil {
		return nil, "", fmt.Errorf("decoding cached enrichment: %w", err)
	}
	return e, groundingMessageID, nil
}

// encodeEnrichment is e as stored: JSON with alert.Enrichment's field
// names, "" for none.
func encodeEnrichment(e *alert.Enrichment) (string, error) {
	if e == nil {
		return "", nil
	}
	raw, err := json.Marshal(e)
	return string(raw), err
}

// decodeEnrichment reads what encodeEnrichment stored.
func decodeEnrichment(raw string) (*alert.Enrichment, error) {
	if raw == "" {
		return nil, nil
	}
	var e alert.Enrichment
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return nil, err
	}
	return &e, nil
}

// SaveGroupEnrichment records a group's enrichment (or why it failed);
// enrichKey is set only when the enrichment may be reused by other groups.
func (s *Store) SaveGroupEnrichment(ctx context.Context, g *alert.Group, enrichKey string, at time.Time) error {
	enrichment, err := encodeEnrichment(g.Enrichment)
	if err != nil {
		return fmt.Errorf("encoding enrichment of alert group %s: %w", g.ID, err)
	}
	_, err = s.db.ExecContext(ctx, `UPDATE notifier_alert_groups SET enrichment = $2, grounding_message_id = $3,
		enrichment_error = $4, enrich_key = $5, enriched_at = $6, updated_at = $6 WHERE id = $1`,
		g.ID, enrichment, g.GroundingMessageID, g.EnrichmentError, enrichKey, sqlstore.Micros(at))
	if err != nil {
		return fmt.Errorf("saving enrichment of alert group %s: %w", g.ID, err)
	}
	return nil
}

// RootFailed reports whether the group's root message failed for good
// with no later notification taking its place.
func (s *Store) RootFailed(ctx context.Context, groupID string) (bool, error) {
	var status string
	err := s.db.QueryRowContext(ctx, `SELECT status FROM notifier_group_notifications WHERE group_id = $1 AND seq = 0`, groupID).Scan(&status)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the root of alert group %s: %w", groupID, err)
	}
	return status == string(alert.StatusFailed), nil
}

// FailNotification records that a notification could not be delivered:
// it and its alerts not yet DELIVERED become FAILED with the public error.
func (s *Store) FailNotification(ctx context.Context, n *Notification, publicErr string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE notifier_group_notifications SET status = $2 WHERE id = $1`, n.ID, string(alert.StatusFailed)); err != nil {
		return fmt.Errorf("recording failure of notification %s: %w", n.ID, err)
	}
	for _, id := range n.AlertIDs {
		if _, err := s.db.ExecContext(ctx, `UPDATE notifier_alerts SET status = $2, error = $3, updated_at = $4,
			attempts = attempts + 1 WHERE id = $1 AND status <> $5`,
			id, string(alert.StatusFailed), publicErr, sqlstore.Micros(at), string(alert.StatusDelivered)); err != nil {
			return fmt.Errorf("recording failure of notification %s: %w", n.ID, err)
		}
	}
	s.alertsChanged()
	return nil
}

// AckGroup records an acknowledgement on a group that has none; it
// reports whether it did (false: acknowledged before, which stands).
func (s *Store) AckGroup(ctx context.Context, q Querier, id string, ack alert.Ack) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE notifier_alert_groups SET ack_actor = $2, ack_by = $3, ack_at = $4, updated_at = $4
		WHERE id = $1 AND ack_at = 0`, id, ack.Actor, ack.By, sqlstore.Micros(ack.At))
	if err != nil {
		return false, fmt.Errorf("acknowledging alert group %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("acknowledging alert group %s: %w", id, err)
	}
	return n > 0, nil
}

// SetGroupSilence records a group's silence (a new one, or the same one
// expired).
func (s *Store) SetGroupSilence(ctx context.Context, q Querier, id string, sil alert.Silence, at time.Time) error {
	res, err := q.ExecContext(ctx, `UPDATE notifier_alert_groups SET silence_id = $2, silence_actor = $3, silence_by = $4,
		silence_ends_at = $5, silence_created_at = $6, silence_expired = $7, updated_at = $8 WHERE id = $1`,
		id, sil.ID, sil.Actor, sil.By, sqlstore.Micros(sil.EndsAt), sqlstore.Micros(sil.CreatedAt), sil.Expired, sqlstore.Micros(at))
	if err != nil {
		return fmt.Errorf("recording the silence of alert group %s: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("recording the silence of alert group %s: %w", id, ErrNotFound)
	}
	return nil
}
