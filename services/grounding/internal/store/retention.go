package store

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// DefaultRetention is how long raw artifacts are kept.
const DefaultRetention = 180 * 24 * time.Hour

// retentionBatch bounds the rows handled per query.
const retentionBatch = 500

// Retention deletes artifact files of messages older than MaxAge and clears
// their artifact path; the messages, citations and reviews are kept.
type Retention struct {
	Store *Store
	// MaxAge is the artifact retention (DefaultRetention when 0).
	MaxAge time.Duration
	// Interval is the period of Run (1 hour when 0).
	Interval time.Duration
	// Now is the clock (time.Now when nil); tests inject one.
	Now    func() time.Time
	Logger *slog.Logger
}

// RunOnce purges every expired artifact and returns how many it removed.
func (r *Retention) RunOnce(ctx context.Context) (int, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	maxAge := r.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultRetention
	}
	cutoff := now().Add(-maxAge)
	removed := 0
	for {
		ids, paths, err := r.Store.expired(ctx, cutoff, retentionBatch)
		if err != nil {
			return removed, err
		}
		var errs []error
		for i, id := range ids {
			if err := r.Store.artifacts.Remove(paths[i]); err != nil {
				errs = append(errs, err)
				continue
			}
			if err := r.Store.clearArtifact(ctx, id, paths[i]); err != nil {
				errs = append(errs, err)
				continue
			}
			removed++
		}
		if len(errs) > 0 {
			// Stop rather than spin on the same rows; the next run retries.
			return removed, errors.Join(errs...)
		}
		if len(ids) < retentionBatch {
			return removed, nil
		}
	}
}

// Run purges at start and then every Interval until ctx is done.
func (r *Retention) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = time.Hour
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := r.RunOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.Logger.WarnContext(ctx, "artifact retention failed", "error", err, "removed", n)
		case n > 0:
			r.Logger.InfoContext(ctx, "artifact retention removed old artifacts", "removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
