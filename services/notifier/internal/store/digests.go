package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

// ClaimForDelivery moves a RECEIVED alert to status, unless a digest took
// it first; it reports whether the alert is the caller's to deliver. The
// alert's own job and a digest both claim only RECEIVED alerts, so exactly
// one of them delivers it.
func (s *Store) ClaimForDelivery(ctx context.Context, id string, status alert.Status, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE notifier_alerts SET status = $2, updated_at = $3
		WHERE id = $1 AND status = $4 AND digest_id = ''`, id, string(status), sqlstore.Micros(at), string(alert.StatusReceived))
	if err != nil {
		return false, fmt.Errorf("claiming alert %s for delivery: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claiming alert %s for delivery: %w", id, err)
	}
	if n > 0 {
		s.alertsChanged()
	}
	return n > 0, nil
}

// Backlog counts the alerts routed to destination that wait for their
// delivery to start, delivered on their own (not in a group or digest).
func (s *Store) Backlog(ctx context.Context, destination string) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifier_alerts
		WHERE destination = $1 AND status = $2 AND group_id = '' AND digest_id = ''`,
		destination, string(alert.StatusReceived)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting the backlog of %s: %w", destination, err)
	}
	return n, nil
}

// ClaimForDigest gives every waiting alert routed to destination to
// digest digestID through q, and returns how many it took.
func (s *Store) ClaimForDigest(ctx context.Context, q Querier, destination, digestID string, at time.Time) (int, error) {
	res, err := q.ExecContext(ctx, `UPDATE notifier_alerts SET digest_id = $2, status = $3, updated_at = $4
		WHERE destination = $1 AND status = $5 AND group_id = '' AND digest_id = ''`,
		destination, digestID, string(alert.StatusDelivering), sqlstore.Micros(at), string(alert.StatusReceived))
	if err != nil {
		return 0, fmt.Errorf("collecting a digest for %s: %w", destination, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("collecting a digest for %s: %w", destination, err)
	}
	return int(n), nil
}

// DigestAlerts returns the alerts of a digest, oldest first.
func (s *Store) DigestAlerts(ctx context.Context, digestID string) ([]*alert.Alert, error) {
	return queryAlerts(ctx, s.db, "digest "+digestID, `SELECT `+alertColumns+` FROM notifier_alerts
		WHERE digest_id = $1 ORDER BY received_at, id`, digestID)
}

// DeliverDigestPart marks the alerts ids of digest digestID that are not
// yet DELIVERED as DELIVERED to destination with the ids and text of the
// digest message that listed them.
func (s *Store) DeliverDigestPart(ctx context.Context, digestID string, ids []string, destination string, deliveryIDs []string, m alert.Message, at time.Time) error {
	dids, err := json.Marshal(nonNilSlice(deliveryIDs))
	if err != nil {
		return err
	}
	const chunk = 500
	for start := 0; start < len(ids); start += chunk {
		part := ids[start:min(start+chunk, len(ids))]
		args := []any{digestID, string(alert.StatusDelivered), destination, string(dids), sqlstore.Micros(at), m.Text, m.Plain, m.ParseMode, m.DisableWebPagePreview}
		ph := make([]string, len(part))
		for i, id := range part {
			args = append(args, id)
			ph[i] = "$" + strconv.Itoa(len(args))
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE notifier_alerts SET status = $2, destination = $3, delivery_ids = $4,
			delivered_at = $5, updated_at = $5, attempts = attempts + 1, error = '',
			message_text = $6, message_plain = $7, message_parse_mode = $8, message_disable_preview = $9
			WHERE digest_id = $1 AND status <> $2 AND id IN (`+strings.Join(ph, ", ")+`)`, args...); err != nil {
			return fmt.Errorf("recording delivery of digest %s: %w", digestID, err)
		}
	}
	s.alertsChanged()
	return nil
}

// FailDigest marks the digest's alerts not yet DELIVERED as FAILED.
func (s *Store) FailDigest(ctx context.Context, digestID, publicErr string, at time.Time) error {
	_, err := s.db.ExecContext(ctx, `UPDATE notifier_alerts SET status = $2, error = $3, updated_at = $4, attempts = attempts + 1
		WHERE digest_id = $1 AND status <> $5`, digestID, string(alert.StatusFailed), publicErr, sqlstore.Micros(at), string(alert.StatusDelivered))
	if err != nil {
		return fmt.Errorf("recording failure of digest %s: %w", digestID, err)
	}
	s.alertsChanged()
	return nil
}
