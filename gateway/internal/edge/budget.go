package edge

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc/codes"
)

// Budgets are per-key allowances for the calls that cost money or model
// time (GATEWAY_KEY_BUDGETS): each key listed, or every key through `*`,
// may make so many such calls per second, minute, hour or day. A budget
// refills continuously (1000/d is 1000 at once, then one more every
// 86.4 s). Past it the call is 429 with Retry-After. Budgets are kept per
// gateway instance, in memory.
type Budgets struct {
	// Refused, when set, is told the name of each key refused for its
	// budget (for a metric).
	Refused func(key string)

	byKey map[string]*keyBudget
	now   func() time.Time
}

type keyBudget struct {
	spec    Budget
	limiter *rate.Limiter
}

// Budget is one GATEWAY_KEY_BUDGETS entry's allowance.
type Budget struct {
	// Calls is how many calls the budget holds.
	Calls int
	// Per is the period it refills over.
	Per time.Duration
}

// String writes the budget as it is configured, e.g. "1000/d".
func (b Budget) String() string {
	for _, u := range budgetUnits {
		if b.Per == u.per {
			return strconv.Itoa(b.Calls) + "/" + u.name
		}
	}
	return strconv.Itoa(b.Calls) + "/" + b.Per.String()
}

var budgetUnits = []struct {
	name string
	per  time.Duration
}{
	{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour},
}

// ParseBudgets reads GATEWAY_KEY_BUDGETS entries, `name:calls/unit` with
// unit s, m, h or d, against the configured keys: a name must be one of
// them, or `*` for every key no entry names. No entries, no budgets.
func ParseBudgets(entries []string, keys []Key) (*Budgets, error) {
	b := &Budgets{byKey: map[string]*keyBudget{}, now: time.Now}
	known := map[string]bool{}
	for _, k := range keys {
		known[k.Name] = true
	}
	var errs []error
	var fallback *Budget
	specs := map[string]Budget{}
	for i, raw := range entries {
		e := strings.TrimSpace(raw)
		if e == "" {
			continue
		}
		pos := "entry " + strconv.Itoa(i+1)
		name, spec, ok := strings.Cut(e, ":")
		name = strings.TrimSpace(name)
		if !ok {
			errs = append(errs, fmt.Errorf("GATEWAY_KEY_BUDGETS: %s (%q): want name:calls/unit, e.g. ci:1000/d", pos, e))
			continue
		}
		budget, err := parseBudget(spec)
		if err != nil {
			errs = append(errs, fmt.Errorf("GATEWAY_KEY_BUDGETS: %s (%q): %w", pos, e, err))
			continue
		}
		switch {
		case name == "*":
			if fallback != nil {
				errs = append(errs, fmt.Errorf("GATEWAY_KEY_BUDGETS: %s: * is given twice", pos))
				continue
			}
			fallback = &budget
		case !known[name]:
			errs = append(errs, fmt.Errorf("GATEWAY_KEY_BUDGETS: %s: no key in GATEWAY_API_KEYS is named %q", pos, name))
		case specs[name] != Budget{}:
			errs = append(errs, fmt.Errorf("GATEWAY_KEY_BUDGETS: %s: %q is given twice", pos, name))
		default:
			specs[name] = budget
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, k := range keys {
		spec, ok := specs[k.Name]
		if !ok {
			if fallback == nil {
				continue
			}
			spec = *fallback
		}
		b.byKey[k.Name] = &keyBudget{spec: spec, limiter: rate.NewLimiter(rate.Limit(float64(spec.Calls)/spec.Per.Seconds()), spec.Calls)}
	}
	return b, nil
}

func parseBudget(s string) (Budget, error) {
	count, unit, ok := strings.Cut(strings.TrimSpace(s), "/")
	n, err := strconv.Atoi(strings.TrimSpace(count))
	if !ok || err != nil || n < 1 {
		return Budget{}, errors.New("want a positive number of calls per unit, e.g. 1000/d")
	}
	for _, u := range budgetUnits {
		if strings.TrimSpace(unit) == u.name {
			return Budget{Calls: n, Per: u.per}, nil
		}
	}
	return Budget{}, fmt.Errorf("unknown unit %q: want s, m, h or d", unit)
}

// Middleware counts each call that costly picks against its key's budget
// and refuses it with 429 and Retry-After once the budget is spent. It
// runs after [Require], so only calls a key may make count. Calls without
// a key (an open gateway) have no budget.
func (b *Budgets) Middleware(costly func(*http.Request) bool, next http.Handler) http.Handler {
	if len(b.byKey) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := ClientFrom(r.Context())
		if c.Key == nil || !costly(r) {
			next.ServeHTTP(w, r)
			return
		}
		kb, ok := b.byKey[c.Key.Name]
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		now := b.now()
		res := kb.limiter.ReserveN(now, 1)
		if d := res.DelayFrom(now); d > 0 {
			res.CancelAt(now)
			if b.Refused != nil {
				b.Refused(c.Key.Name)
			}
			secs := strconv.Itoa(int(d.Seconds() + 0.999))
			w.Header().Set("Retry-After", secs)
			refuseUnread(w, r)
			WriteError(w, http.StatusTooManyRequests, codes.ResourceExhausted,
				"the budget of key "+c.Key.Name+" ("+kb.spec.String()+" provider-backed calls) is spent: retry after "+secs+"s")
			return
		}
		next.ServeHTTP(w, r)
	})
}
