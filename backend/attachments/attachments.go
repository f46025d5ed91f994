package attachments

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// Package attachments is the composer's files: what the user attaches to a message by
// drag and drop, paste or the file picker. The window (or, for the picker, the app shell after the native dialog)
// hands over the file's bytes; nothing here ever opens a path the window names. The
// bytes are kept content-addressed in <data dir>/attachments/<sha256[:2]>/<sha256>
// (docs/store.md, "Attachments"); images go to the model as image parts, text files
// inline, cut at a limit with a note.

// MaxAttachmentBytes is the largest file that can be attached: 20 MiB (the largest
// image a runtime reads, protocol.MaxImageFileBytes).
const MaxAttachmentBytes = protocol.MaxImageFileBytes

// MaxAttachmentsPerMessage bounds the files sent with one message.
const MaxAttachmentsPerMessage = 20

// DefaultTextAttachmentLimit is how many bytes of a text file the model gets by default:
// 64 KiB (about 16,000 tokens). The setting "attachments.text_limit" changes it (1 KiB
// to 1 MiB).
const DefaultTextAttachmentLimit = 64 << 10

// The text limit setting (bytes; Settings' chat preferences edit it in KiB).
const (
	KeyTextLimit = "attachments.text_limit"
	MinTextLimit = 1 << 10
	MaxTextLimit = 1 << 20
)

// Service stages, stores, previews and sweeps attachments, and builds the parts a
// message with files is sent as (the turn runner's Parts hook). Build it with New.
type Service struct{ c *core.Core }

// New returns the attachments of c's data folder (<data dir>/attachments).
func New(c *core.Core) *Service { return &Service{c: c} }

// AttachmentError says why a file cannot be attached or sent; Name is the file.
type AttachmentError struct {
	Name    string
	Problem string
}

func (e *AttachmentError) Error() string { return e.Problem }

// blobStore keeps attachment bytes content-addressed under dir.
type blobStore struct{ dir string }

func (b blobStore) path(sum string) string { return filepath.Join(b.dir, sum[:2], sum) }

// put stores data under its SHA-256 (written to a temporary file, synced, then
// renamed, so a reader never sees half a file) and returns the digest. A file already
// there is kept.
func (b blobStore) put(data []byte) (string, error) {
	h := sha256.Sum256(data)
	sum := hex.EncodeToString(h[:])
	dst := b.path(sum)
	if fi, err := os.Stat(dst); err == nil && fi.Size() == int64(len(data)) {
		now := time.Now()
		_ = os.Chtimes(dst, now, now) // a fresh time keeps it from a sweep racing its row
		return sum, nil
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".put-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return sum, os.Rename(tmp.Name(), dst)
}

// read returns at most n bytes (all when n < 0) of the file of sum.
func (b blobStore) read(sum string, n int64) ([]byte, error) {
	if len(sum) != 64 {
		return nil, fmt.Errorf("bad digest %q", sum)
	}
	f, err := os.Open(b.path(sum))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if n < 0 {
		return io.ReadAll(io.LimitReader(f, MaxAttachmentBytes+1))
	}
	return io.ReadAll(io.LimitReader(f, n))
}

// sweep removes every file no attachment row names, except files younger than minAge
// (one just written whose row is being added). It returns how many it removed.
func (b blobStore) sweep(inUse map[string]bool, minAge time.Duration) (int, error) {
	removed := 0
	dirs, err := os.ReadDir(b.dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		if !d.IsDir() || len(d.Name()) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(b.dir, d.Name()))
		if err != nil {
			continue
		}
		for _, f := range files {
			name := f.Name()
			if inUse[name] {
				continue
			}
			info, err := f.Info()
			if err != nil || time.Since(info.ModTime()) < minAge {
				continue
			}
			if os.Remove(filepath.Join(b.dir, d.Name(), name)) == nil {
				removed++
			}
		}
	}
	return removed, nil
}

// Read returns the first n bytes of the attachment file of digest sum (n < 0: all of
// it). Errors: the file is missing or unreadable.
func (s *Service) Read(sum string, n int64) ([]byte, error) { return s.blobs().read(sum, n) }

// Has reports whether the attachment file of digest sum is in the data folder.
func (s *Service) Has(sum string) bool {
	_, err := os.Stat(s.blobs().path(sum))
	return err == nil
}

// Put stores data content-addressed and returns its sha256 (hex). Errors: the disk's.
func (s *Service) Put(data []byte) (string, error) { return s.blobs().put(data) }

func (s *Service) blobs() blobStore {
	return blobStore{dir: filepath.Join(s.c.Paths.DataDir, "attachments")}
}

// TextLimit is the setting attachments.text_limit (bytes), DefaultTextAttachmentLimit
// when unset or out of range.
func (s *Service) TextLimit(ctx context.Context) int64 {
	v, err := s.c.Setting(ctx, KeyTextLimit, "")
	if err != nil || v == "" {
		return DefaultTextAttachmentLimit
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < MinTextLimit || n > MaxTextLimit {
		return DefaultTextAttachmentLimit
	}
	return n
}

// sniff decides what a file is: an image the models take (PNG, JPEG, GIF, WebP, by
// their first bytes) or text (valid UTF-8 without NUL bytes; a byte-order mark is
// allowed). Anything else cannot be attached.
func sniff(name string, data []byte) (kind, mimeType string, ok bool) {
	switch {
	case bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")):
		return store.AttachmentImage, "image/png", true
	case bytes.HasPrefix(data, []byte{0xff, 0xd8, 0xff}):
		return store.AttachmentImage, "image/jpeg", true
	case bytes.HasPrefix(data, []byte("GIF87a")), bytes.HasPrefix(data, []byte("GIF89a")):
		return store.AttachmentImage, "image/gif", true
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return store.AttachmentImage, "image/webp", true
	}
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return "", "", false
	}
	mt := mime.TypeByExtension(strings.ToLower(filepath.Ext(name)))
	if mt == "" || !(strings.HasPrefix(mt, "text/") || strings.Contains(mt, "json") || strings.Contains(mt, "xml") ||
		strings.Contains(mt, "javascript") || strings.Contains(mt, "yaml") || strings.Contains(mt, "toml")) {
		mt = "text/plain"
	}
	if i := strings.IndexByte(mt, ';'); i >= 0 {
		mt = strings.TrimSpace(mt[:i])
	}
	return store.AttachmentText, mt, true
}

// cleanName keeps a file name safe to show and to put in the model's text: its base
// name, control characters and quotes replaced, at most store.MaxAttachmentName bytes.
func cleanName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	name = filepath.Base(strings.TrimSpace(name))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r < 0x20 || r == 0x7f || r == '"' || r == '<' || r == '>':
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimSpace(b.String())
	for len(out) > store.MaxAttachmentName {
		_, size := utf8.DecodeLastRuneInString(out)
		out = out[:len(out)-size]
	}
	if out == "" || out == "." || out == "/" {
		out = "attachment"
	}
	return out
}

// cutText is how many bytes of a text file of data the model gets with limit: all of
// it when it fits, else up to the last line break before the limit (the last rune
// boundary when a line is longer than half the limit).
func cutText(data []byte, limit int64) int64 {
	if int64(len(data)) <= limit {
		return int64(len(data))
	}
	cut := int(limit)
	for cut > 0 && !utf8.RuneStart(data[cut]) {
		cut--
	}
	if nl := bytes.LastIndexByte(data[:cut], '\n'); nl >= cut/2 {
		cut = nl + 1
	}
	return int64(cut)
}

// AttachFile stages a file in session id's composer: data is the file's bytes as the
// user dropped, pasted or picked it, name its file name (only the base name is kept).
// The file is stored content-addressed; a text file's cut is fixed now (the setting
// attachments.text_limit), so the chip can say it. Errors: *AttachmentError for an
// empty file, one over MaxAttachmentBytes, or one that is neither an image the models
// take nor text; store.ErrNotFound; a disk error.
func (s *Service) AttachFile(ctx context.Context, sessionID, name string, data []byte) (store.Attachment, error) {
	name = cleanName(name)
	switch {
	case len(data) == 0:
		return store.Attachment{}, &AttachmentError{Name: name, Problem: fmt.Sprintf("%s is empty: there is nothing to attach", name)}
	case len(data) > MaxAttachmentBytes:
		return store.Attachment{}, &AttachmentError{Name: name, Problem: fmt.Sprintf(
			"%s is %s; Talaria attaches files up to %s. Attach a smaller file, or a part of it.", name, humanBytes(int64(len(data))), humanBytes(MaxAttachmentBytes))}
	}
	if _, err := s.c.Store.GetSession(ctx, sessionID); err != nil {
		return store.Attachment{}, err
	}
	if staged, err := s.c.Store.StagedAttachments(ctx, sessionID); err == nil && len(staged) >= MaxAttachmentsPerMessage {
		return store.Attachment{}, &AttachmentError{Name: name, Problem: fmt.Sprintf(
			"a message takes at most %d files: send these first, or remove one", MaxAttachmentsPerMessage)}
	}
	kind, mt, ok := sniff(name, data)
	if !ok {
		return store.Attachment{}, &AttachmentError{Name: name, Problem: fmt.Sprintf(
			"%s is neither a text file nor an image (PNG, JPEG, GIF or WebP): Talaria cannot send it to the model. Paste the part you need as text instead.", name)}
	}
	sum, err := s.blobs().put(data)
	if err != nil {
		return store.Attachment{}, fmt.Errorf("keeping %s in the data folder failed: %w; check that the disk is not full", name, err)
	}
	sent := int64(len(data))
	if kind == store.AttachmentText {
		sent = cutText(data, s.TextLimit(ctx))
	}
	a, err := s.c.Store.StageAttachment(ctx, sessionID, store.Attachment{SHA256: sum, Name: name, MIMEType: mt, Kind: kind,
		Size: int64(len(data)), SentBytes: sent})
	if err != nil {
		return store.Attachment{}, err
	}
	return a, nil
}

// StagedAttachments lists the files waiting in session id's composer, oldest first.
// Errors: store.ErrNotFound.
func (s *Service) StagedAttachments(ctx context.Context, sessionID string) ([]store.Attachment, error) {
	return s.c.Store.StagedAttachments(ctx, sessionID)
}

// RemoveAttachment takes a staged file out of session id's composer (its bytes go
// when nothing else uses them). Errors: store.ErrNotFound when it is not staged there.
func (s *Service) RemoveAttachment(ctx context.Context, sessionID, id string) error {
	if err := s.c.Store.UnstageAttachment(ctx, sessionID, id); err != nil {
		return err
	}
	s.Sweep(ctx)
	return nil
}

// AttachmentContent is what the window shows of an attachment: a data: URL of an
// image, or the first bytes of a text file.
type AttachmentContent struct {
	Attachment store.Attachment `json:"attachment"`
	// DataURL is data:<mime>;base64,... for an image; "" for text.
	DataURL string `json:"data_url"`
	// Text is the start of a text file (at most 8 KiB, cut at a rune boundary); ""
	// for an image.
	Text string `json:"text"`
}

// previewTextBytes is how much of a text file AttachmentPreview returns.
const previewTextBytes = 8 << 10

// AttachmentPreview returns attachment id of session sessionID for the window to
// show (the chip's preview, an image opened large). Errors: store.ErrNotFound;
// *AttachmentError when its file is missing from the data folder.
func (s *Service) AttachmentPreview(ctx context.Context, sessionID, id string) (AttachmentContent, error) {
	a, err := s.c.Store.Attachment(ctx, sessionID, id)
	if err != nil {
		return AttachmentContent{}, err
	}
	out := AttachmentContent{Attachment: a}
	if a.Kind == store.AttachmentImage {
		data, err := s.blobs().read(a.SHA256, -1)
		if err != nil {
			return out, &AttachmentError{Name: a.Name, Problem: a.Name + " is missing from the data folder: " + err.Error()}
		}
		out.DataURL = "data:" + a.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(data)
		return out, nil
	}
	data, err := s.blobs().read(a.SHA256, previewTextBytes)
	if err != nil {
		return out, &AttachmentError{Name: a.Name, Problem: a.Name + " is missing from the data folder: " + err.Error()}
	}
	for len(data) > 0 && !utf8.Valid(data) {
		data = data[:len(data)-1]
	}
	out.Text = string(data)
	return out, nil
}

// SweepAttachments removes attachment files no row names that are older than minAge
// (the start-up sweep uses an hour), and returns how many it removed.
func (s *Service) SweepAttachments(ctx context.Context, minAge time.Duration) (int, error) {
	inUse, err := s.c.Store.BlobsInUse(ctx)
	if err != nil {
		return 0, err
	}
	return s.blobs().sweep(inUse, minAge)
}

// Sweep removes attachment files no row names any more (a removed attachment, a
// deleted chat, an edit or retry that replaced a message). Files younger than a
// minute are kept: one may have been written for a row that is being added.
func (s *Service) Sweep(ctx context.Context) {
	inUse, err := s.c.Store.BlobsInUse(ctx)
	if err != nil {
		s.c.Log.Warn("attachment sweep: reading the digests failed", "err", err)
		return
	}
	if n, err := s.blobs().sweep(inUse, time.Minute); err != nil {
		s.c.Log.Warn("attachment sweep failed", "err", err)
	} else if n > 0 {
		s.c.Log.Info("attachment files removed", "count", n)
	}
}

// MessageParts builds the content parts a user row is sent with: one text part per
// text file (its first SentBytes bytes, in an <attachment> element naming the file, with
// a note when cut), one image_file part per image (in the attachment store), then the
// row's own text. A row without attachments has no parts (its text is sent as it is).
// Errors: *AttachmentError when a text file is missing from the data folder (an image
// the runtime reads itself and reports).
func (s *Service) MessageParts(m store.Message) ([]protocol.ContentPart, error) {
	if len(m.Attachments) == 0 {
		return nil, nil
	}
	var parts []protocol.ContentPart
	for _, a := range m.Attachments {
		switch a.Kind {
		case store.AttachmentText:
			data, err := s.blobs().read(a.SHA256, a.SentBytes)
			if err != nil {
				return nil, &AttachmentError{Name: a.Name, Problem: fmt.Sprintf(
					"the attached file %s is missing from the data folder (%v): remove it and attach it again", a.Name, err)}
			}
			parts = append(parts, protocol.TextPart(attachmentText(a, data)))
		case store.AttachmentImage:
			parts = append(parts, protocol.ContentPart{Type: protocol.PartImageFile, ImageFile: &protocol.ImageFile{
				Path: s.blobs().path(a.SHA256), MIMEType: a.MIMEType, Name: a.Name, Size: a.Size, SHA256: a.SHA256}})
		}
	}
	if m.Content != "" {
		parts = append(parts, protocol.TextPart(m.Content))
	}
	return parts, nil
}

// attachmentText is a text file as the model reads it:
//
//	<attachment name="notes.txt" type="text/plain" size="5.1 KB">
//	...the file...
//	</attachment>
//
// and, when only its start is sent, a note attribute and a closing line saying so.
func attachmentText(a store.Attachment, data []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<attachment name=%q type=%q size=%q", a.Name, a.MIMEType, humanBytes(a.Size))
	if a.Truncated() {
		fmt.Fprintf(&b, " note=%q", "only the first "+humanBytes(a.SentBytes)+" of the file are included")
	}
	b.WriteString(">\n")
	b.Write(data)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		b.WriteByte('\n')
	}
	if a.Truncated() {
		fmt.Fprintf(&b, "[... the rest of %s (%s) is not included ...]\n", a.Name, humanBytes(a.Size-a.SentBytes))
	}
	b.WriteString("</attachment>")
	return b.String()
}

// humanBytes writes a size for people: 512 bytes, 5.1 KB, 2.3 MB (1 KB = 1024 bytes).
func humanBytes(n int64) string {
	switch {
	case n < 1<<10:
		if n == 1 {
			return "1 byte"
		}
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<10))) + " KB"
	default:
		return trimZero(fmt.Sprintf("%.1f", float64(n)/(1<<20))) + " MB"
	}
}

func trimZero(s string) string { return strings.TrimSuffix(s, ".0") }
