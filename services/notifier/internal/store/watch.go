package store

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

// ChangeQuery selects alerts changed after a cursor for AlertsChangedAfter.
type ChangeQuery struct {
	Status alert.Status // empty: any
	// AfterMicros and AfterID are the cursor: alerts whose (updated_at, id)
	// comes after it. An empty AfterID means every alert updated after
	// AfterMicros (Unix microseconds).
	AfterMicros int64
	AfterID     string
	Limit       int // 1..
}

// AlertsChangedAfter returns up to q.Limit alerts changed after q's cursor,
// in (updated_at, id) order.
func (s *Store) AlertsChangedAfter(ctx context.Context, q ChangeQuery) ([]*alert.Alert, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if q.AfterID == "" {
		where = append(where, "updated_at > "+arg(q.AfterMicros))
	} else {
		a1, a2, a3 := arg(q.AfterMicros), arg(q.AfterMicros), arg(q.AfterID)
		where = append(where, "(updated_at > "+a1+" OR (updated_at = "+a2+" AND id > "+a3+"))")
	}
	if q.Status != "" {
		where = append(where, "status = "+arg(string(q.Status)))
	}
	query := `SELECT ` + alertColumns + ` FROM notifier_alerts WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY updated_at, id LIMIT ` + arg(q.Limit)
	return queryAlerts(ctx, s.db, "changed alerts", query, args...)
}

// SubscribeAlertChanges returns a channel that receives (at most one
// pending value) each time this process writes an alert, so a watcher
// re-reads at once instead of at its next poll, and the function that ends
// the subscription. Writes by other processes on the same database are
// seen only by polling.
func (s *Store) SubscribeAlertChanges() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	s.changes.mu.Lock()
	defer s.changes.mu.Unlock()
	if s.changes.subs == nil {
		s.changes.subs = map[chan struct{}]struct{}{}
	}
	s.changes.subs[ch] = struct{}{}
	return ch, func() {
		s.changes.mu.Lock()
		defer s.changes.mu.Unlock()
		delete(s.changes.subs, ch)
	}
}

// changes wakes the subscribers of SubscribeAlertChanges.
type changes struct {
	mu   sync.Mutex
	subs map[chan struct{}]struct{}
}

// alertsChanged wakes every subscriber; one that has a wake-up pending
// already will re-read everything anyway, so none ever blocks the writer.
func (s *Store) alertsChanged() {
	s.changes.mu.Lock()
	defer s.changes.mu.Unlock()
	for ch := range s.changes.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
