package backend

import (
	"context"
	"time"

	"talaria/backend/store"
)

// JournalPruneEvery is how often a running app prunes the journal (store.PruneJournal
// with store.JournalMaxAge and store.JournalKeepPerSession); it also prunes once in the
// background at start-up.
const JournalPruneEvery = 24 * time.Hour

// startJournalPrune prunes the journal now and every JournalPruneEvery, off the
// caller's path, until Close. A failed prune (a locked or full database) is logged and
// tried again at the next tick: nothing depends on it.
func (s *Service) startJournalPrune() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.pruneStop = func() {
		cancel()
		<-done
	}
	go func() {
		defer close(done)
		every(ctx, JournalPruneEvery, s.pruneJournal)
	}()
}

// every calls f at once and then every period until ctx ends (f's own run time does
// not shift the schedule; a tick missed while f runs is dropped).
func every(ctx context.Context, period time.Duration, f func(context.Context)) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		f(ctx)
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// pruneJournal applies the journal retention once.
func (s *Service) pruneJournal(ctx context.Context) {
	cut := time.Now().Add(-store.JournalMaxAge).UnixMilli()
	n, err := s.Store.PruneJournal(ctx, cut, store.JournalKeepPerSession)
	switch {
	case err != nil && ctx.Err() == nil:
		s.Log.Warn("pruning the journal failed; trying again later", "err", err)
	case n > 0:
		s.Log.Info("journal pruned", "frames", n, "older_than_days", int(store.JournalMaxAge/(24*time.Hour)),
			"kept_per_session", store.JournalKeepPerSession)
	}
}
