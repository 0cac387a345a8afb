// Package alertwatch streams alert changes to watchers (WatchAlerts, the
// console's live alerts page). Every notifier instance on one database
// serves every change: a watch reads the alerts changed after its cursor
// (updated_at, id) from the store at a short interval, and a write in this
// process wakes it at once. It holds no per-watch queue: a slow watcher
// reads the store at its own pace, so memory stays bounded however many
// alerts change.
package alertwatch

import (
	"context"
	"errors"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/store"
)

// ErrStopping ends a watch when the server shuts down.
var ErrStopping = errors.New("the alert watch ended: the server is shutting down")

// Source is the store a watch reads.
type Source interface {
	AlertsChangedAfter(ctx context.Context, q store.ChangeQuery) ([]*alert.Alert, error)
	SubscribeAlertChanges() (<-chan struct{}, func())
}

var _ Source = (*store.Store)(nil)

// Config tunes a Watcher; zero values take the defaults.
type Config struct {
	// Poll is how often a watch reads the store when nothing in this
	// process woke it (changes made by other instances); default 1s.
	Poll time.Duration
	// Lookback is how far before its cursor a watch re-reads, so a change
	// stamped before a later one but committed after it, or stamped by an
	// instance whose clock lags, is still seen; default 5s. Changes already
	// sent are not sent again.
	Lookback time.Duration
	// PageSize is how many alerts one read returns; default 200.
	PageSize int
	// Heartbeat is how long a watch may send nothing before it calls its
	// Query.Heartbeat (a keep-alive); default 30s.
	Heartbeat time.Duration
	// Stop ends every watch with ErrStopping when it closes (server
	// shutdown), so a graceful stop does not wait for them.
	Stop <-chan struct{}
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Watcher serves watches over one store.
type Watcher struct {
	src Source
	cfg Config
}

// New returns a Watcher over src.
func New(src Source, cfg Config) *Watcher {
	if cfg.Poll <= 0 {
		cfg.Poll = time.Second
	}
	if cfg.Lookback <= 0 {
		cfg.Lookback = 5 * time.Second
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 30 * time.Second
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 200
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Watcher{src: src, cfg: cfg}
}

// Query says which changes a watch sends.
type Query struct {
	// Status keeps only alerts in this status after the change; empty: any.
	Status alert.Status
	// UpdatedAfter keeps only changes after it; zero: after the watch starts.
	UpdatedAfter time.Time
	// Started, when set, is called once the watch has its starting point
	// and listens for changes (a gRPC handler sends its headers then, so a
	// client knows that what it writes next will be seen); its error ends
	// the watch.
	Started func() error
	// Heartbeat, when set, is called after Config.Heartbeat without a
	// change (a keep-alive through proxies and write deadlines); its error
	// ends the watch.
	Heartbeat func() error
}

// Watch calls fn with each alert that changes, oldest change first, until
// ctx ends (its error is returned), the Watcher stops (ErrStopping), or
// fn or a read fails (that error).
func (w *Watcher) Watch(ctx context.Context, q Query, fn func(*alert.Alert) error) error {
	wake, unsubscribe := w.src.SubscribeAlertChanges()
	defer unsubscribe()
	ticker := time.NewTicker(w.cfg.Poll)
	defer ticker.Stop()

	floor := q.UpdatedAfter
	if floor.IsZero() {
		floor = w.cfg.Now()
	}
	lookback := w.cfg.Lookback.Microseconds()
	// cursor is the newest change sent; sent holds what was sent of the
	// alerts still inside the lookback window, so a re-read sends nothing
	// twice.
	var cursor struct {
		at int64
		id string
	}
	cursor.at = sqlstore.Micros(floor)
	sent := map[string]int64{}
	if q.Started != nil {
		if err := q.Started(); err != nil {
			return err
		}
	}
	quiet := time.Now()
	for {
		low := max(sqlstore.Micros(floor), cursor.at-lookback)
		cq := store.ChangeQuery{Status: q.Status, AfterMicros: low, Limit: w.cfg.PageSize}
		for {
			page, err := w.src.AlertsChangedAfter(ctx, cq)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return err
			}
			for _, a := range page {
				at := sqlstore.Micros(a.UpdatedAt)
				if last, ok := sent[a.ID]; ok && last >= at {
					continue
				}
				if err := fn(a); err != nil {
					return err
				}
				quiet = time.Now()
				sent[a.ID] = at
				if at > cursor.at || (at == cursor.at && a.ID > cursor.id) {
					cursor.at, cursor.id = at, a.ID
				}
			}
			if len(page) < cq.Limit {
				break
			}
			last := page[len(page)-1]
			cq.AfterMicros, cq.AfterID = sqlstore.Micros(last.UpdatedAt), last.ID
		}
		// The next read starts at the new low; what is older is never
		// re-read, so it need not be remembered.
		next := max(sqlstore.Micros(floor), cursor.at-lookback)
		for id, at := range sent {
			if at <= next {
				delete(sent, id)
			}
		}
		if q.Heartbeat != nil && time.Since(quiet) >= w.cfg.Heartbeat {
			if err := q.Heartbeat(); err != nil {
				return err
			}
			quiet = time.Now()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.cfg.Stop:
			return ErrStopping
		case <-wake:
		case <-ticker.C:
		}
	}
}
