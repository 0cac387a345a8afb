package research

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"
)

// errNoRetriever fails the retrieval of a run that names a collection when
// the service has no Retriever.
var errNoRetriever = errors.New("no document collection service configured")

// lookup is one evidence call of a research step and, after fetchAll, its
// answer.
type lookup struct {
	// question is the sub-question the evidence is for.
	question string
	// call asks the backend; nil when the lookup failed before any call
	// (err is then set).
	call func(context.Context) ([]Evidence, error)
	// describe wraps call's error with what was looked up; nil leaves
	// err as it is.
	describe func(error) error
	// warning is logged with err when the call fails; empty logs nothing.
	warning string

	ev  []Evidence
	err error
	// panicked holds a panic of call, re-raised by fetchAll.
	panicked *lookupPanic
}

// failure is the lookup's error as the step reports it.
func (l *lookup) failure() error {
	if l.describe == nil {
		return l.err
	}
	return l.describe(l.err)
}

// fetchAll makes the lookups' calls, at most limit at once, and stores each
// answer in its lookup, so the caller reads them in its own order whatever
// order they arrive in. Every call runs to the end even when others fail:
// a failed lookup costs its sub-question, not the step. Once ctx ends no
// more calls start (the step then fails with ctx's error anyway), and
// fetchAll returns only after every call it started has returned, so no
// goroutine outlives it. A panicking call is re-raised here, on the step's
// goroutine, where the job runner recovers it as it did when the calls ran
// inline; left in its own goroutine it would kill the process.
func fetchAll(ctx context.Context, lookups []lookup, limit int) {
	var (
		wg    sync.WaitGroup
		slots = make(chan struct{}, max(limit, 1))
	)
	for i := range lookups {
		l := &lookups[i]
		if l.call == nil {
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		// Checked after the select as well: when a slot frees up because a
		// call gave up on the ended ctx, both cases are ready and select
		// may take the slot.
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-slots }()
			defer func() {
				if r := recover(); r != nil {
					l.panicked = &lookupPanic{value: r, stack: debug.Stack()}
				}
			}()
			l.ev, l.err = l.call(ctx)
		})
	}
	wg.Wait()
	for i := range lookups {
		if p := lookups[i].panicked; p != nil {
			panic(p)
		}
	}
}

// lookupPanic is a panic of a lookup's call, carried to the step's
// goroutine with the stack where it happened.
type lookupPanic struct {
	value any
	stack []byte
}

// Error gives the panic value and the stack of the lookup goroutine, which
// the re-raised panic's own stack no longer shows.
func (p *lookupPanic) Error() string {
	return fmt.Sprintf("research lookup panicked: %v\n\n%s", p.value, p.stack)
}

// Unwrap returns the panic value when it is an error.
func (p *lookupPanic) Unwrap() error {
	err, _ := p.value.(error)
	return err
}
