package tokenstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

// TestKeychainCallsInOrder: a keychain call its caller stopped waiting for (the keychain froze, an
// unlock prompt nobody answered) goes on by itself, and the calls made after it reach the
// keychain after it, one at a time, in the order they were made: a sign-in's Save abandoned
// while the keychain waits, then a sign-out's Delete, must not end with the Delete done first and
// the abandoned Save landing after it, the credential the person signed out of kept. A call whose
// caller stopped waiting before its turn never reaches the keychain (its caller was told it
// failed, and it did). Another server's entry is not held up.
func TestKeychainCallsInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The queue's channels are this bubble's: none may outlive it.
		t.Cleanup(func() { keychainQueue.mu.Lock(); keychainQueue.tails = nil; keychainQueue.mu.Unlock() })
		var mu sync.Mutex
		var ran []string
		record := func(s string) {
			mu.Lock()
			ran = append(ran, s)
			mu.Unlock()
		}
		frozen, thaw := make(chan struct{}), make(chan struct{})
		release := sync.OnceFunc(func() { close(thaw) })
		defer release() // a failed check ends the frozen call too, so the bubble can end
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-frozen
			cancel() // the caller's bound ends while the keychain holds the call
		}()
		_, err := keychainCall(ctx, "srv", func() (struct{}, error) {
			record("save")
			close(frozen)
			<-thaw
			return struct{}{}, nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("the abandoned call: %v, want the context's error", err)
		}
		gone, drop := context.WithCancel(context.Background())
		dropped := make(chan error, 1)
		go func() {
			_, err := keychainCall(gone, "srv", func() (struct{}, error) { record("dropped"); return struct{}{}, nil })
			dropped <- err
		}()
		synctest.Wait()
		drop() // its caller stops waiting before its turn
		if err := <-dropped; !errors.Is(err, context.Canceled) {
			t.Fatalf("the call given up before its turn: %v, want the context's error", err)
		}
		// Another server's entry does not wait for this one's.
		if _, err := keychainCall(context.Background(), "other", func() (struct{}, error) { record("other"); return struct{}{}, nil }); err != nil {
			t.Fatal(err)
		}
		deleted := make(chan error, 1)
		go func() {
			_, err := keychainCall(context.Background(), "srv", func() (struct{}, error) { record("delete"); return struct{}{}, nil })
			deleted <- err
		}()
		synctest.Wait() // every goroutine waits: the delete, if it does not wait for the save, ran
		mu.Lock()
		early := slices.Clone(ran)
		mu.Unlock()
		if !slices.Equal(early, []string{"save", "other"}) {
			t.Errorf("while the keychain holds the first call, the calls after it ran: %v, want [save other]", early)
		}
		release()
		if err := <-deleted; err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if !slices.Equal(ran, []string{"save", "other", "delete"}) {
			t.Errorf("calls reached the keychain as %v, want [save other delete]", ran)
		}
	})
}
