package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"
)

// Attachment kinds (attachments.kind).
const (
	AttachmentImage = "image" // sent to the model as an image part
	AttachmentText  = "text"  // its first SentBytes bytes are inlined into the message's text
)

// MaxAttachmentName is the longest attachment file name kept, in bytes.
const MaxAttachmentName = 255

// Attachment is a file the user attached to a message, or staged in a chat's composer
// (MessageID 0). The bytes are not in the database: they are a content-addressed file
// named by SHA256 (see backend's attachment store).
type Attachment struct {
	ID        string `json:"id"` // uuid
	SessionID string `json:"session_id"`
	MessageID int64  `json:"message_id,omitempty"` // 0 while staged
	SHA256    string `json:"sha256"`               // lowercase hex of the bytes
	Name      string `json:"name"`                 // the file name the user attached
	MIMEType  string `json:"mime_type"`
	Kind      string `json:"kind"` // AttachmentImage or AttachmentText
	Size      int64  `json:"size"` // bytes
	// SentBytes is, for a text file, how many of its first bytes the model gets (Size
	// when whole); for an image, Size.
	SentBytes int64 `json:"sent_bytes"`
	CreatedAt int64 `json:"created_at"` // epoch milliseconds
	// Data is the file's bytes, only in an export document (base64 in JSON).
	Data []byte `json:"data,omitempty"`
}

// Truncated reports whether only the first SentBytes bytes of a text file are sent.
func (a Attachment) Truncated() bool { return a.Kind == AttachmentText && a.SentBytes < a.Size }

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// checkAttachment validates the fields a caller sets.
func checkAttachment(a Attachment) error {
	switch {
	case !sha256RE.MatchString(a.SHA256):
		return fmt.Errorf("attachment digest %q is not a lowercase hex SHA-256: %w", a.SHA256, ErrInvalid)
	case a.Kind != AttachmentImage && a.Kind != AttachmentText:
		return fmt.Errorf("unknown attachment kind %q: %w", a.Kind, ErrInvalid)
	case strings.TrimSpace(a.Name) == "" || len(a.Name) > MaxAttachmentName || !utf8.ValidString(a.Name):
		return fmt.Errorf("attachment name %q is empty, too long or not UTF-8: %w", a.Name, ErrInvalid)
	case a.Size < 0 || a.SentBytes < 0 || a.SentBytes > a.Size:
		return fmt.Errorf("attachment %q: size %d, sent %d: %w", a.Name, a.Size, a.SentBytes, ErrInvalid)
	case a.MIMEType == "" || len(a.MIMEType) > 255:
		return fmt.Errorf("attachment %q has no MIME type: %w", a.Name, ErrInvalid)
	}
	return nil
}

const attachmentCols = `id, session_id, COALESCE(message_id, 0), sha256, name, mime_type, kind, size, sent_bytes, created_at`

func scanAttachment(row scanner) (Attachment, error) {
	var a Attachment
	err := row.Scan(&a.ID, &a.SessionID, &a.MessageID, &a.SHA256, &a.Name, &a.MIMEType, &a.Kind, &a.Size, &a.SentBytes, &a.CreatedAt)
	return a, err
}

// StageAttachment records a file attached in the composer of session sessionID (not
// yet sent): a new id, MessageID 0, CreatedAt now. The caller has stored the bytes
// under a.SHA256 first. Errors: ErrNotFound for a missing or deleted session;
// ErrInvalid for a bad field.
func (s *Store) StageAttachment(ctx context.Context, sessionID string, a Attachment) (Attachment, error) {
	op := "stage attachment in " + sessionID
	if err := checkAttachment(a); err != nil {
		return Attachment{}, wrap(op, err)
	}
	a.ID, a.SessionID, a.MessageID, a.CreatedAt, a.Data = uuid.NewString(), sessionID, 0, s.now(), nil
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO attachments(id, session_id, message_id, ord, sha256, name, mime_type,
			kind, size, sent_bytes, created_at) VALUES(?, ?, NULL, 0, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, sessionID, a.SHA256, a.Name, a.MIMEType, a.Kind, a.Size, a.SentBytes, a.CreatedAt)
		return err
	})
	if err != nil {
		return Attachment{}, err
	}
	return a, nil
}

// StagedAttachments returns the attachments waiting in session sessionID's composer,
// oldest first. ErrNotFound for a missing or deleted session.
func (s *Store) StagedAttachments(ctx context.Context, sessionID string) ([]Attachment, error) {
	out := []Attachment{}
	err := s.read(ctx, "staged attachments of "+sessionID, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+attachmentCols+` FROM attachments
			WHERE session_id = ? AND message_id IS NULL ORDER BY created_at, rowid`, sessionID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanAttachment(rows)
			if err != nil {
				return err
			}
			out = append(out, a)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Attachment returns one attachment of session sessionID (staged or sent).
// ErrNotFound when there is none with that id in that (live) session.
func (s *Store) Attachment(ctx context.Context, sessionID, id string) (Attachment, error) {
	var out Attachment
	err := s.read(ctx, "attachment "+id, func(tx *sql.Tx) error {
		if _, err := liveSession(ctx, tx, sessionID); err != nil {
			return err
		}
		var err error
		out, err = scanAttachment(tx.QueryRowContext(ctx, `SELECT `+attachmentCols+` FROM attachments
			WHERE id = ? AND session_id = ?`, id, sessionID))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("attachment %s: %w", id, ErrNotFound)
		}
		return err
	})
	return out, err
}

// UnstageAttachment removes a staged attachment from session sessionID's composer.
// Removing one that is not staged there (sent, removed, unknown) is ErrNotFound.
func (s *Store) UnstageAttachment(ctx context.Context, sessionID, id string) error {
	return s.write(ctx, "unstage attachment "+id, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM attachments WHERE id = ? AND session_id = ? AND message_id IS NULL`,
			id, sessionID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("attachment %s is not staged in %s: %w", id, sessionID, ErrNotFound)
		}
		return nil
	})
}

// BlobsInUse returns the digests every attachment row names (staged, sent, in any
// session, hidden ones included): the files the attachment store must keep.
func (s *Store) BlobsInUse(ctx context.Context) (map[string]bool, error) {
	out := map[string]bool{}
	err := s.read(ctx, "attachment digests", func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT sha256 FROM attachments`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h string
			if err := rows.Scan(&h); err != nil {
				return err
			}
			out[h] = true
		}
		return rows.Err()
	})
	return out, err
}

// insertAttachments writes the attachments of rows just inserted (IDs set): an
// attachment with an ID staged in the session is moved onto its row; any other is
// inserted as a new row from its fields (a retry resending a message's files, an
// import). Errors: ErrInvalid for a bad field or an ID that is not staged in the
// session (already sent, removed).
func insertAttachments(ctx context.Context, tx *sql.Tx, sessionID string, now int64, rows []Message) error {
	for i := range rows {
		m := &rows[i]
		for j := range m.Attachments {
			a := &m.Attachments[j]
			if a.ID != "" && a.SessionID == sessionID {
				res, err := tx.ExecContext(ctx, `UPDATE attachments SET message_id = ?, ord = ?
					WHERE id = ? AND session_id = ? AND message_id IS NULL`, m.ID, j, a.ID, sessionID)
				if err != nil {
					return err
				}
				if n, _ := res.RowsAffected(); n == 1 {
					got, err := scanAttachment(tx.QueryRowContext(ctx, `SELECT `+attachmentCols+` FROM attachments WHERE id = ?`, a.ID))
					if err != nil {
						return err
					}
					*a = got
					continue
				}
				return fmt.Errorf("attachment %s is no longer waiting to be sent (removed or already sent): %w", a.ID, ErrInvalid)
			}
			if err := checkAttachment(*a); err != nil {
				return err
			}
			created := a.CreatedAt
			if created == 0 {
				created = now
			}
			na := Attachment{ID: uuid.NewString(), SessionID: sessionID, MessageID: m.ID, SHA256: a.SHA256, Name: a.Name,
				MIMEType: a.MIMEType, Kind: a.Kind, Size: a.Size, SentBytes: a.SentBytes, CreatedAt: created}
			if _, err := tx.ExecContext(ctx, `INSERT INTO attachments(id, session_id, message_id, ord, sha256, name,
				mime_type, kind, size, sent_bytes, created_at) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
				na.ID, sessionID, m.ID, j, na.SHA256, na.Name, na.MIMEType, na.Kind, na.Size, na.SentBytes, na.CreatedAt); err != nil {
				return err
			}
			*a = na
		}
	}
	return nil
}

// attachTo fills in the Attachments of rows (all of one session, as read: the whole
// transcript or a page of it) from the attachments table, in their order. It reads
// only the attachments of message ids within the rows' range (attachments_by_session).
func attachTo(ctx context.Context, tx *sql.Tx, sessionID string, rows []Message) error {
	if len(rows) == 0 {
		return nil
	}
	byID := make(map[int64]int, len(rows))
	lo, hi := rows[0].ID, rows[0].ID
	for i, m := range rows {
		byID[m.ID] = i
		lo, hi = min(lo, m.ID), max(hi, m.ID)
	}
	q, err := tx.QueryContext(ctx, `SELECT `+attachmentCols+` FROM attachments
		WHERE session_id = ? AND message_id BETWEEN ? AND ? ORDER BY message_id, ord`, sessionID, lo, hi)
	if err != nil {
		return err
	}
	defer q.Close()
	for q.Next() {
		a, err := scanAttachment(q)
		if err != nil {
			return err
		}
		if i, ok := byID[a.MessageID]; ok {
			rows[i].Attachments = append(rows[i].Attachments, a)
		}
	}
	return q.Err()
}

// copyAttachments copies the attachments of the source's rows at positions
// 0..through onto the rows of the same positions in session dst (a fork), with new
// ids.
func copyAttachments(ctx context.Context, tx *sql.Tx, src, dst string, through int) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO attachments(id, session_id, message_id, ord, sha256, name, mime_type,
		kind, size, sent_bytes, created_at)
		SELECT lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' ||
				substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))),
			?, nm.id, a.ord, a.sha256, a.name, a.mime_type, a.kind, a.size, a.sent_bytes, a.created_at
		FROM attachments a
		JOIN messages om ON om.id = a.message_id
		JOIN messages nm ON nm.session_id = ? AND nm.position = om.position
		WHERE om.session_id = ? AND om.position <= ?`, dst, dst, src, through)
	return err
}
