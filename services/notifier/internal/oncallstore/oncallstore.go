// Package oncallstore keeps on-call schedules, escalation policies and
// alert groups' escalations in the notifier's database (tables created by
// the notifier store's migrations). Schedules and policies are stored as
// JSON documents of this package's own shape; escalations as rows whose
// position is compared-and-set, with their timeline in a table of events.
package oncallstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
)

// Store implements oncall.Store over the notifier's database.
type Store struct {
	db  *sqlstore.DB
	now func() time.Time
}

var _ oncall.Store = (*Store)(nil)

// New returns a Store over db, migrated by the notifier store.
func New(db *sqlstore.DB) *Store { return &Store{db: db, now: time.Now} }

const (
	kindSchedule = "schedule"
	kindPolicy   = "policy"
)

// The stored shapes: plain JSON of the domain types, times in RFC 3339,
// zones by IANA name.
type participantDoc struct {
	UserID   int64  `json:"user_id,omitempty"`
	Username string `json:"username,omitempty"`
	Name     string `json:"name,omitempty"`
}

type windowDoc struct {
	Days  []int `json:"days,omitempty"`
	Start int   `json:"start"`
	End   int   `json:"end"`
}

type layerDoc struct {
	Name         string           `json:"name"`
	Participants []participantDoc `json:"participants"`
	Length       int              `json:"length"`
	Hours        int              `json:"hours,omitempty"`
	Start        time.Time        `json:"start"`
	Windows      []windowDoc      `json:"windows,omitempty"`
}

type overrideDoc struct {
	Participant participantDoc `json:"participant"`
	Start       time.Time      `json:"start"`
	End         time.Time      `json:"end"`
}

type scheduleDoc struct {
	ID        string        `json:"id"`
	Name      string        `json:"name,omitempty"`
	TimeZone  string        `json:"time_zone"`
	Layers    []layerDoc    `json:"layers"`
	Overrides []overrideDoc `json:"overrides,omitempty"`
}

type stepDoc struct {
	ScheduleID  string           `json:"schedule_id,omitempty"`
	Users       []participantDoc `json:"users,omitempty"`
	WaitSeconds int64            `json:"wait_seconds"`
}

type policyDoc struct {
	ID      string            `json:"id"`
	Name    string            `json:"name,omitempty"`
	Match   map[string]string `json:"match,omitempty"`
	Default bool              `json:"default,omitempty"`
	Steps   []stepDoc         `json:"steps"`
	Repeat  int               `json:"repeat,omitempty"`
}

func toParticipantDoc(p oncall.Participant) participantDoc {
	return participantDoc{UserID: p.UserID, Username: p.Username, Name: p.Name}
}

func (d participantDoc) domain() oncall.Participant {
	return oncall.Participant{UserID: d.UserID, Username: d.Username, Name: d.Name}
}

func toScheduleDoc(s *oncall.Schedule) scheduleDoc {
	d := scheduleDoc{ID: s.ID, Name: s.Name, TimeZone: s.Location.String()}
	for _, l := range s.Layers {
		ld := layerDoc{Name: l.Name, Length: int(l.Rotation.Length), Hours: l.Rotation.Hours, Start: l.Rotation.Start.UTC()}
		for _, p := range l.Participants {
			ld.Participants = append(ld.Participants, toParticipantDoc(p))
		}
		for _, w := range l.Windows {
			wd := windowDoc{Start: w.Start, End: w.End}
			for _, day := range w.Days {
				wd.Days = append(wd.Days, int(day))
			}
			ld.Windows = append(ld.Windows, wd)
		}
		d.Layers = append(d.Layers, ld)
	}
	for _, o := range s.Overrides {
		d.Overrides = append(d.Overrides, overrideDoc{Participant: toParticipantDoc(o.Participant), Start: o.Start.UTC(), End: o.End.UTC()})
	}
	return d
}

func (d scheduleDoc) domain() (*oncall.Schedule, error) {
	loc, err := time.LoadLocation(d.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("schedule %q: time zone %q: %w", d.ID, d.TimeZone, err)
	}
	s := &oncall.Schedule{ID: d.ID, Name: d.Name, Location: loc}
	for _, ld := range d.Layers {
		l := oncall.Layer{Name: ld.Name, Rotation: oncall.Rotation{Length: oncall.Length(ld.Length), Hours: ld.Hours, Start: ld.Start}}
		for _, p := range ld.Participants {
			l.Participants = append(l.Participants, p.domain())
		}
		for _, wd := range ld.Windows {
			w := oncall.Window{Start: wd.Start, End: wd.End}
			for _, day := range wd.Days {
				w.Days = append(w.Days, time.Weekday(day))
			}
			l.Windows = append(l.Windows, w)
		}
		s.Layers = append(s.Layers, l)
	}
	for _, od := range d.Overrides {
		s.Overrides = append(s.Overrides, oncall.Override{Participant: od.Participant.domain(), Start: od.Start, End: od.End})
	}
	return s, nil
}

func toPolicyDoc(p oncall.Policy) policyDoc {
	d := policyDoc{ID: p.ID, Name: p.Name, Match: p.Match, Default: p.Default, Repeat: p.Repeat}
	for _, s := range p.Steps {
		sd := stepDoc{ScheduleID: s.ScheduleID, WaitSeconds: int64(s.Wait / time.Second)}
		for _, u := range s.Users {
			sd.Users = append(sd.Users, toParticipantDoc(u))
		}
		d.Steps = append(d.Steps, sd)
	}
	return d
}

func (d policyDoc) domain() oncall.Policy {
	p := oncall.Policy{ID: d.ID, Name: d.Name, Match: d.Match, Default: d.Default, Repeat: d.Repeat}
	for _, sd := range d.Steps {
		s := oncall.Step{ScheduleID: sd.ScheduleID, Wait: time.Duration(sd.WaitSeconds) * time.Second}
		for _, u := range sd.Users {
			s.Users = append(s.Users, u.domain())
		}
		p.Steps = append(p.Steps, s)
	}
	return p
}

func (s *Store) put(ctx context.Context, kind, id string, doc any, by string) error {
	body, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encoding %s %q: %w", kind, id, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO notifier_oncall_documents (kind, id, body, updated_by, updated_at)
		VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (kind, id) DO UPDATE SET body = excluded.body, updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
		kind, id, string(body), by, sqlstore.Micros(s.now()))
	if err != nil {
		return fmt.Errorf("storing %s %q: %w", kind, id, err)
	}
	return nil
}

func (s *Store) get(ctx context.Context, kind, id string, doc any) error {
	var body string
	err := s.db.QueryRowContext(ctx, `SELECT body FROM notifier_oncall_documents WHERE kind = $1 AND id = $2`, kind, id).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return oncall.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("loading %s %q: %w", kind, id, err)
	}
	return json.Unmarshal([]byte(body), doc)
}

func (s *Store) list(ctx context.Context, kind string, each func(body []byte) error) error {
	rows, err := s.db.QueryContext(ctx, `SELECT body FROM notifier_oncall_documents WHERE kind = $1 ORDER BY id`, kind)
	if err != nil {
		return fmt.Errorf("listing %ss: %w", kind, err)
	}
	defer rows.Close()
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return err
		}
		if err := each([]byte(body)); err != nil {
			return err
		}
	}
	return rows.Err()
}

func (s *Store) delete(ctx context.Context, kind, id string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM notifier_oncall_documents WHERE kind = $1 AND id = $2`, kind, id)
	if err != nil {
		return fmt.Errorf("deleting %s %q: %w", kind, id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return oncall.ErrNotFound
	}
	return nil
}

// PutSchedule stores a schedule, replacing the one with its id.
func (s *Store) PutSchedule(ctx context.Context, sc *oncall.Schedule, by string) error {
	return s.put(ctx, kindSchedule, sc.ID, toScheduleDoc(sc), by)
}

// Schedule returns a schedule, or oncall.ErrNotFound.
func (s *Store) Schedule(ctx context.Context, id string) (*oncall.Schedule, error) {
	var d scheduleDoc
	if err := s.get(ctx, kindSchedule, id, &d); err != nil {
		return nil, err
	}
	return d.domain()
}

// Schedules returns every schedule, by id.
func (s *Store) Schedules(ctx context.Context) ([]*oncall.Schedule, error) {
	var out []*oncall.Schedule
	err := s.list(ctx, kindSchedule, func(body []byte) error {
		var d scheduleDoc
		if err := json.Unmarshal(body, &d); err != nil {
			return err
		}
		sc, err := d.domain()
		if err != nil {
			return err
		}
		out = append(out, sc)
		return nil
	})
	return out, err
}

// DeleteSchedule deletes a schedule, or answers oncall.ErrNotFound.
func (s *Store) DeleteSchedule(ctx context.Context, id string) error {
	return s.delete(ctx, kindSchedule, id)
}

// PutPolicy stores a policy, replacing the one with its id.
func (s *Store) PutPolicy(ctx context.Context, p oncall.Policy, by string) error {
	return s.put(ctx, kindPolicy, p.ID, toPolicyDoc(p), by)
}

// Policy returns a policy, or oncall.ErrNotFound.
func (s *Store) Policy(ctx context.Context, id string) (oncall.Policy, error) {
	var d policyDoc
	if err := s.get(ctx, kindPolicy, id, &d); err != nil {
		return oncall.Policy{}, err
	}
	return d.domain(), nil
}

// Policies returns every policy, by id.
func (s *Store) Policies(ctx context.Context) ([]oncall.Policy, error) {
	var out []oncall.Policy
	err := s.list(ctx, kindPolicy, func(body []byte) error {
		var d policyDoc
		if err := json.Unmarshal(body, &d); err != nil {
			return err
		}
		out = append(out, d.domain())
		return nil
	})
	return out, err
}

// DeletePolicy deletes a policy, or answers oncall.ErrNotFound.
func (s *Store) DeletePolicy(ctx context.Context, id string) error {
	return s.delete(ctx, kindPolicy, id)
}

// CreateEscalation stores e unless the group has one already.
func (s *Store) CreateEscalation(ctx context.Context, e *oncall.Escalation) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `INSERT INTO notifier_escalations (group_id, policy_id, state, round, step, next_at, started_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (group_id) DO NOTHING`,
		e.GroupID, e.PolicyID, string(e.State), e.Pos.Round, e.Pos.Step, sqlstore.Micros(e.NextAt), sqlstore.Micros(e.StartedAt), sqlstore.Micros(s.now()))
	if err != nil {
		return false, fmt.Errorf("creating the escalation of group %s: %w", e.GroupID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if err := appendEvents(ctx, tx, e.GroupID, e.Timeline...); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// Escalation returns a group's escalation with its timeline.
func (s *Store) Escalation(ctx context.Context, groupID string) (*oncall.Escalation, error) {
	e := &oncall.Escalation{GroupID: groupID}
	var state string
	var next, started int64
	err := s.db.QueryRowContext(ctx, `SELECT policy_id, state, round, step, next_at, started_at FROM notifier_escalations WHERE group_id = $1`, groupID).
		Scan(&e.PolicyID, &state, &e.Pos.Round, &e.Pos.Step, &next, &started)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, oncall.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("loading the escalation of group %s: %w", groupID, err)
	}
	e.State, e.NextAt, e.StartedAt = oncall.State(state), sqlstore.FromMicros(next), sqlstore.FromMicros(started)
	rows, err := s.db.QueryContext(ctx, `SELECT at, kind, round, step, participant, channel, detail
		FROM notifier_escalation_events WHERE group_id = $1 ORDER BY at, seq`, groupID)
	if err != nil {
		return nil, fmt.Errorf("loading the escalation timeline of group %s: %w", groupID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var ev oncall.Event
		var at int64
		var kind, participant string
		if err := rows.Scan(&at, &kind, &ev.Pos.Round, &ev.Pos.Step, &participant, &ev.Channel, &ev.Detail); err != nil {
			return nil, err
		}
		var p participantDoc
		if err := json.Unmarshal([]byte(participant), &p); err != nil {
			return nil, fmt.Errorf("decoding an escalation event of group %s: %w", groupID, err)
		}
		ev.At, ev.Kind, ev.Participant = sqlstore.FromMicros(at), oncall.EventKind(kind), p.domain()
		e.Timeline = append(e.Timeline, ev)
	}
	return e, rows.Err()
}

// Advance moves an escalation from one position to another if it is still
// escalating at from.
func (s *Store) Advance(ctx context.Context, groupID string, from, to oncall.Position, nextAt time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE notifier_escalations SET round = $1, step = $2, next_at = $3, updated_at = $4
		WHERE group_id = $5 AND state = $6 AND round = $7 AND step = $8`,
		to.Round, to.Step, sqlstore.Micros(nextAt), sqlstore.Micros(s.now()), groupID, string(oncall.Escalating), from.Round, from.Step)
	if err != nil {
		return false, fmt.Errorf("advancing the escalation of group %s: %w", groupID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// Stop ends an escalation still under way with state, recording ev.
func (s *Store) Stop(ctx context.Context, groupID string, state oncall.State, ev oncall.Event) (bool, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, err
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, `UPDATE notifier_escalations SET state = $1, updated_at = $2 WHERE group_id = $3 AND state = $4`,
		string(state), sqlstore.Micros(s.now()), groupID, string(oncall.Escalating))
	if err != nil {
		return false, fmt.Errorf("stopping the escalation of group %s: %w", groupID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	if err := appendEvents(ctx, tx, groupID, ev); err != nil {
		return false, err
	}
	return true, tx.Commit()
}

// AppendEvents adds events to a group's timeline.
func (s *Store) AppendEvents(ctx context.Context, groupID string, evs ...oncall.Event) error {
	return appendEvents(ctx, s.db, groupID, evs...)
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func appendEvents(ctx context.Context, q execer, groupID string, evs ...oncall.Event) error {
	for _, ev := range evs {
		p, err := json.Marshal(toParticipantDoc(ev.Participant))
		if err != nil {
			return err
		}
		at := sqlstore.Micros(ev.At)
		// seq orders events of one instant (a step's mention and direct
		// messages) as they were appended.
		var seq int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifier_escalation_events WHERE group_id = $1 AND at = $2`, groupID, at).Scan(&seq); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO notifier_escalation_events (group_id, at, seq, kind, round, step, participant, channel, detail)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			groupID, at, seq, string(ev.Kind), ev.Pos.Round, ev.Pos.Step, string(p), ev.Channel, ev.Detail); err != nil {
			return fmt.Errorf("recording an escalation event of group %s: %w", groupID, err)
		}
	}
	return nil
}

// GroupByRoot returns the id of the alert group whose root message is
// messageID in chat, or oncall.ErrNotFound.
func (s *Store) GroupByRoot(ctx context.Context, chat, messageID string) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT id FROM notifier_alert_groups WHERE destination = $1 AND root_message_id = $2`, chat, messageID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", oncall.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("finding the alert group of message %s: %w", messageID, err)
	}
	return id, nil
}

// GroupExists reports whether an alert group with this id is stored.
func (s *Store) GroupExists(ctx context.Context, id string) (bool, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifier_alert_groups WHERE id = $1`, id).Scan(&n); err != nil {
		return false, fmt.Errorf("looking up alert group %s: %w", id, err)
	}
	return n > 0, nil
}
