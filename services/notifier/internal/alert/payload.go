package alert

import (
	"fmt"
	"strings"
	"time"
)

// MaxPayloadAlerts is the most alerts one webhook payload may carry.
const MaxPayloadAlerts = 1000

// AlertmanagerPayload is Alertmanager's webhook payload, version 4. The JSON
// names are Alertmanager's, so a payload decodes as it is sent.
type AlertmanagerPayload struct {
	Version           string              `json:"version"`
	GroupKey          string              `json:"groupKey"`
	TruncatedAlerts   int64               `json:"truncatedAlerts"`
	Status            string              `json:"status"`
	Receiver          string              `json:"receiver"`
	GroupLabels       map[string]string   `json:"groupLabels"`
	CommonLabels      map[string]string   `json:"commonLabels"`
	CommonAnnotations map[string]string   `json:"commonAnnotations"`
	ExternalURL       string              `json:"externalURL"`
	Alerts            []AlertmanagerAlert `json:"alerts"`
}

// AlertmanagerAlert is one alert of an Alertmanager payload.
type AlertmanagerAlert struct {
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
}

// FromAlertmanager returns one Alert per alert of p, in order.
func FromAlertmanager(p AlertmanagerPayload) ([]Alert, error) {
	c := payloadCommon{p.Receiver, p.GroupKey, p.ExternalURL, p.CommonLabels, p.CommonAnnotations}
	return fromPayload(SourceAlertmanager, p.Alerts, func(a AlertmanagerAlert) (payloadAlert, func(*upstream, map[string]any)) {
		return a.payloadAlert(c), func(*upstream, map[string]any) {}
	})
}

// fromPayload builds one Alert per alert of a payload from source, in
// order; each says what an alert has in common with every source's, and
// what only its source's adds.
func fromPayload[A any](source string, alerts []A, each func(A) (payloadAlert, func(*upstream, map[string]any))) ([]Alert, error) {
	if err := checkCount(len(alerts)); err != nil {
		return nil, err
	}
	out := make([]Alert, 0, len(alerts))
	for i, a := range alerts {
		pa, extra := each(a)
		al, err := pa.build(source, i, extra)
		if err != nil {
			return nil, err
		}
		out = append(out, al)
	}
	return out, nil
}

// payloadAlert is a with what its payload says of all its alerts.
func (a AlertmanagerAlert) payloadAlert(c payloadCommon) payloadAlert {
	return payloadAlert{c, a.Status, a.Labels, a.Annotations, a.StartsAt, a.EndsAt, a.GeneratorURL, a.Fingerprint}
}

// payloadCommon is what a payload says of all its alerts.
type payloadCommon struct {
	receiver, groupKey, externalURL string
	labels, annotations             map[string]string
}

// payloadAlert is what every upstream payload says of one of its alerts
// (Alertmanager's and Grafana's share these fields and rules).
type payloadAlert struct {
	common                    payloadCommon
	status                    string
	labels, annotations       map[string]string
	startsAt, endsAt          time.Time
	generatorURL, fingerprint string
}

// build checks and builds the i-th alert of a payload from source: its
// labels and annotations over the payload's common ones, and its metadata;
// extra adds what only that source's payload carries.
func (pa payloadAlert) build(source string, i int, extra func(u *upstream, md map[string]any)) (Alert, error) {
	status, err := checkStatus(fmt.Sprintf("alerts[%d].status", i), pa.status)
	if err != nil {
		return Alert{}, err
	}
	u := upstream{
		status:      status,
		labels:      merge(pa.common.labels, pa.labels),
		annotations: merge(pa.common.annotations, pa.annotations),
	}
	md := map[string]any{
		"labels":      stringMap(u.labels),
		"annotations": stringMap(u.annotations),
		"receiver":    pa.common.receiver,
		"groupKey":    pa.common.groupKey,
	}
	putIf(md, "startsAt", timeString(pa.startsAt))
	putIf(md, "endsAt", timeString(pa.endsAt))
	putIf(md, "generatorURL", pa.generatorURL)
	putIf(md, "externalURL", pa.common.externalURL)
	extra(&u, md)
	if err := checkMetadata(fmt.Sprintf("alerts[%d]", i), md); err != nil {
		return Alert{}, err
	}
	return fromUpstream(source, u, strings.TrimSpace(pa.fingerprint), md), nil
}

// GrafanaPayload is Grafana's webhook contact point payload (version 1).
type GrafanaPayload struct {
	Receiver          string            `json:"receiver"`
	Status            string            `json:"status"`
	OrgID             int64             `json:"orgId"`
	Alerts            []GrafanaAlert    `json:"alerts"`
	GroupLabels       map[string]string `json:"groupLabels"`
	CommonLabels      map[string]string `json:"commonLabels"`
	CommonAnnotations map[string]string `json:"commonAnnotations"`
	ExternalURL       string            `json:"externalURL"`
	Version           string            `json:"version"`
	GroupKey          string            `json:"groupKey"`
	TruncatedAlerts   int64             `json:"truncatedAlerts"`
	Title             string            `json:"title"`
	State             string            `json:"state"`
	Message           string            `json:"message"`
}

// GrafanaAlert is one alert of a Grafana payload.
type GrafanaAlert struct {
	// AlertmanagerAlert holds the fields Grafana's alert shares with
	// Alertmanager's (its payload follows Alertmanager's webhook).
	AlertmanagerAlert
	SilenceURL   string         `json:"silenceURL"`
	DashboardURL string         `json:"dashboardURL"`
	PanelURL     string         `json:"panelURL"`
	Values       map[string]any `json:"values"`
	ValueString  string         `json:"valueString"`
	ImageURL     string         `json:"imageURL"`
}

// FromGrafana returns one Alert per alert of p, in order.
func FromGrafana(p GrafanaPayload) ([]Alert, error) {
	c := payloadCommon{p.Receiver, p.GroupKey, p.ExternalURL, p.CommonLabels, p.CommonAnnotations}
	return fromPayload(SourceGrafana, p.Alerts, func(a GrafanaAlert) (payloadAlert, func(*upstream, map[string]any)) {
		return a.payloadAlert(c), func(u *upstream, md map[string]any) {
			u.valueString = a.ValueString
			if p.OrgID != 0 {
				md["orgId"] = float64(p.OrgID)
			}
			putIf(md, "silenceURL", a.SilenceURL)
			putIf(md, "dashboardURL", a.DashboardURL)
			putIf(md, "panelURL", a.PanelURL)
			putIf(md, "imageURL", a.ImageURL)
			putIf(md, "valueString", a.ValueString)
			if len(a.Values) > 0 {
				md["values"] = a.Values
			}
		}
	})
}

func checkCount(n int) error {
	switch {
	case n == 0:
		return &FieldError{"alerts", "must hold at least one alert"}
	case n > MaxPayloadAlerts:
		return &FieldError{"alerts", fmt.Sprintf("must hold at most %d alerts", MaxPayloadAlerts)}
	}
	return nil
}

func putIf(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}
