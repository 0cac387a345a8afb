package chat

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
)

// Refusals counts refused updates and presses by reason.
type Refusals interface {
	Refuse(reason string)
}

// NopRefusals counts nothing.
type NopRefusals struct{}

// Refuse does nothing.
func (NopRefusals) Refuse(string) {}

// RefusalCounter counts refusals as the Prometheus counter
// notifier_telegram_refused_total{reason}.
type RefusalCounter struct {
	c *prometheus.CounterVec
}

var _ Refusals = (*RefusalCounter)(nil)

// Reasons a Telegram update (or a part of it) is refused, the reason label
// of notifier_telegram_refused_total.
const (
	ReasonWebhookSecret   = "webhook_secret"    // missing or wrong secret token
	ReasonWebhookDisabled = "webhook_disabled"  // TELEGRAM_WEBHOOK_DISABLED=true
	ReasonChatNotAllowed  = "chat_not_allowed"  // a chat outside TELEGRAM_ALLOWED_CHATS
	ReasonRateLimited     = "chat_rate_limited" // the chat's NOTIFIER_CHAT_RATE budget is spent
)

// NewRefusalCounter registers the counter with reg (nil: not registered)
// and starts every known reason at zero so that dashboards see the series.
func NewRefusalCounter(reg prometheus.Registerer, reasons ...string) *RefusalCounter {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "notifier_telegram_refused_total",
		Help: "Telegram updates, button presses and replies refused, by reason.",
	}, []string{"reason"})
	if reg != nil {
		reg.MustRegister(c)
	}
	for _, r := range append([]string{ReasonWebhookSecret, ReasonWebhookDisabled, ReasonChatNotAllowed, ReasonRateLimited}, reasons...) {
		c.WithLabelValues(r)
	}
	return &RefusalCounter{c: c}
}

// Refuse counts one refusal.
func (r *RefusalCounter) Refuse(reason string) { r.c.WithLabelValues(reason).Inc() }

// Rate is a reply budget: at most N replies per Per, per chat. The zero
// value is unlimited.
type Rate struct {
	N   int
	Per time.Duration
}

// ParseRate reads NOTIFIER_CHAT_RATE: "<n>/<unit>" with unit s, m, h or d
// (e.g. "20/h"), or "off" (or empty) for no limit.
func ParseRate(s string) (Rate, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" {
		return Rate{}, nil
	}
	n, unit, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || count < 1 {
		return Rate{}, fmt.Errorf("want <n>/<unit> such as 20/h (n ≥ 1; unit s, m, h or d) or off, got %q", s)
	}
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[strings.TrimSpace(unit)]
	if per == 0 {
		return Rate{}, fmt.Errorf("want <n>/<unit> such as 20/h (unit s, m, h or d), got %q", s)
	}
	return Rate{N: count, Per: per}, nil
}

// String writes r as ParseRate reads it.
func (r Rate) String() string {
	if r.N == 0 {
		return "off"
	}
	unit := map[time.Duration]string{time.Second: "s", time.Minute: "m", time.Hour: "h", 24 * time.Hour: "d"}[r.Per]
	return fmt.Sprintf("%d/%s", r.N, unit)
}

// budgets hands out each chat's reply budget. Only chats the agent
// answers in get one, so the table is as small as the allowed chats.
type budgets struct {
	rate Rate
	now  func() time.Time
	mu   sync.Mutex
	per  map[int64]*budget
}

type budget struct {
	lim *rate.Limiter
	// told is set once the chat was told its budget is spent, and reset by
	// the next reply, so a busy chat hears it once, not on every message.
	told bool
}

// take spends one reply of chat's budget. It reports whether the reply may
// go out, and whether the chat should be told it may not (the first
// refusal since its last reply).
func (b *budgets) take(chat int64) (ok, tell bool) {
	if b.rate.N == 0 {
		return true, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.per == nil {
		b.per = map[int64]*budget{}
	}
	bu, found := b.per[chat]
	if !found {
		bu = &budget{lim: rate.NewLimiter(rate.Every(b.rate.Per/time.Duration(b.rate.N)), b.rate.N)}
		b.per[chat] = bu
	}
	if bu.lim.AllowN(b.now(), 1) {
		bu.told = false
		return true, false
	}
	tell = !bu.told
	bu.told = true
	return false, tell
}
