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
	if err := checkCount(len(p.Alerts)); err != nil {
		return nil, err
	}
	out := make([]Alert, 0, len(p.Alerts))
	for i, a := range p.Alerts {
		status, err := checkStatus(fmt.Sprintf("alerts[%d].status", i), a.Status)
		if err != nil {
			return nil, err
		}
		u := upstream{
			status:      status,
			labels:      merge(p.CommonLabels, a.Labels),
			annotations: merge(p.CommonAnnotations, a.Annotations),
		}
		md := map[string]any{
			"labels":      stringMap(u.labels),
			"annotations": stringMap(u.annotations),
			"receiver":    p.Receiver,
			"groupKey":    p.GroupKey,
		}
		putIf(md, "startsAt", timeString(a.StartsAt))
		putIf(md, "endsAt", timeString(a.EndsAt))
		putIf(md, "generatorURL", a.GeneratorURL)
		putIf(md, "externalURL", p.ExternalURL)
		if err := checkMetadata(fmt.Sprintf("alerts[%d]", i), md); err != nil {
			return nil, err
		}
		out = append(out, fromUpstream(SourceAlertmanager, u, strings.TrimSpace(a.Fingerprint), md))
	}
	return out, nil
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
	Status       string            `json:"status"`
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	GeneratorURL string            `json:"generatorURL"`
	Fingerprint  string            `json:"fingerprint"`
	SilenceURL   string            `json:"silenceURL"`
	DashboardURL string            `json:"dashboardURL"`
	PanelURL     string            `json:"panelURL"`
	Values       map[string]any    `json:"values"`
	ValueString  string            `json:"valueString"`
	ImageURL     string            `json:"imageURL"`
}

// FromGrafana returns one Alert per alert of p, in order.
func FromGrafana(p GrafanaPayload) ([]Alert, error) {
	if err := checkCount(len(p.Alerts)); err != nil {
		return nil, err
	}
	out := make([]Alert, 0, len(p.Alerts))
	for i, a := range p.Alerts {
		status, err := checkStatus(fmt.Sprintf("alerts[%d].status", i), a.Status)
		if err != nil {
			return nil, err
		}
		u := upstream{
			status:      status,
			labels:      merge(p.CommonLabels, a.Labels),
			annotations: merge(p.CommonAnnotations, a.Annotations),
			valueString: a.ValueString,
		}
		md := map[string]any{
			"labels":      stringMap(u.labels),
			"annotations": stringMap(u.annotations),
			"receiver":    p.Receiver,
			"groupKey":    p.GroupKey,
		}
		if p.OrgID != 0 {
			md["orgId"] = float64(p.OrgID)
		}
		putIf(md, "startsAt", timeString(a.StartsAt))
		putIf(md, "endsAt", timeString(a.EndsAt))
		putIf(md, "generatorURL", a.GeneratorURL)
		putIf(md, "silenceURL", a.SilenceURL)
		putIf(md, "dashboardURL", a.DashboardURL)
		putIf(md, "panelURL", a.PanelURL)
		putIf(md, "imageURL", a.ImageURL)
		putIf(md, "valueString", a.ValueString)
		putIf(md, "externalURL", p.ExternalURL)
		if len(a.Values) > 0 {
			md["values"] = a.Values
		}
		if err := checkMetadata(fmt.Sprintf("alerts[%d]", i), md); err != nil {
			return nil, err
		}
		out = append(out, fromUpstream(SourceGrafana, u, strings.TrimSpace(a.Fingerprint), md))
	}
	return out, nil
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
