package alert

// Citation is one source grounding found for an alert.
type Citation struct {
	Title   string // shown as is; the URL's domain when empty
	Snippet string // optional excerpt of the source
	URL     string // must be an absolute http or https URL to be shown
}

// Enrichment is what grounding found for an alert or a group: the one
// shape the enricher returns, the formatter renders and the store keeps
// (as JSON, with these field names, on a group).
type Enrichment struct {
	// Summary is grounding's short summary; empty means none.
	Summary string
	// Confidence is carried so that callers can pass grounding's result as
	// it is; the contract has no place for it, so it is not rendered.
	Confidence *float64
	// Citations are the sources, most important first: when the message is
	// too long, the last ones are dropped first.
	Citations []Citation
	// MessageID is grounding's id of the stored answer, for audit.
	MessageID string
	// Unavailable says, in plain words, why the answer has no source to
	// show (e.g. format.NoSources, "search unavailable"); "" when it has
	// one. Such an enrichment is delivered as the note "Enrichment
	// unavailable: <Unavailable>", never as an uncited summary.
	Unavailable string
}
