package research

import "github.com/prometheus/client_golang/prometheus"

// Metrics are the research workflow's metrics.
type Metrics struct {
	approvals     *prometheus.CounterVec
	lateDecisions prometheus.Counter
}

// NewMetrics registers the metrics on reg:
//
//	research_approvals_total{outcome}        counter: approved, rejected, escalated
//	research_late_decisions_total            counter: decisions refused because timeout_at had passed
//
// An escalation counts once, whether the timeout job, a late decision or
// a read made it.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		approvals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "research_approvals_total",
			Help: "Research approval requests that ended, by outcome (approved, rejected, escalated).",
		}, []string{"outcome"}),
		lateDecisions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "research_late_decisions_total",
			Help: "Approval decisions refused because they came at or after the approval's timeout.",
		}),
	}
	for _, c := range []prometheus.Collector{m.approvals, m.lateDecisions} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	// Every outcome is exported from the start, so rate() and alerts see
	// a series before the first approval ends.
	for _, o := range []ApprovalStatus{ApprovalApproved, ApprovalRejected, ApprovalEscalated} {
		m.approvals.WithLabelValues(string(o))
	}
	return m, nil
}

// approvalEnded counts an approval that left pending.
func (m *Metrics) approvalEnded(outcome ApprovalStatus) {
	if m == nil {
		return
	}
	m.approvals.WithLabelValues(string(outcome)).Inc()
}

// lateDecision counts a refused late decision.
func (m *Metrics) lateDecision() {
	if m == nil {
		return
	}
	m.lateDecisions.Inc()
}
