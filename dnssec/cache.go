package dnssec

import (
	"container/list"
	"sync"
	"time"
)

// cache holds validated results (zone keys, delegations, answers) for as
// long as their TTLs and signatures allow, bounded in entries with
// least-recently-used eviction. Concurrent requests for a key that is not
// cached share one computation. Values are never modified once stored.
type cache struct {
	max int

	mu       sync.Mutex
	entries  map[string]*list.Element
	lru      *list.List // front is most recently used
	inflight map[string]*flight
}

type cacheEntry struct {
	key     string
	val     any
	expires time.Time
}

type flight struct {
	done chan struct{}
	val  any
}

func newCache(max int) *cache {
	return &cache{
		max:      max,
		entries:  map[string]*list.Element{},
		lru:      list.New(),
		inflight: map[string]*flight{},
	}
}

// do returns the cached value for key, or computes it with fn. fn returns
// the value and how long it may be cached; 0 or less means not at all
// (failures that should be retried).
func (c *cache) do(key string, now time.Time, fn func() (any, time.Duration)) any {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry)
		if now.Before(e.expires) {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			return e.val
		}
		c.lru.Remove(el)
		delete(c.entries, key)
	}
	if f, ok := c.inflight[key]; ok {
		c.mu.Unlock()
		<-f.done
		return f.val
	}
	f := &flight{done: make(chan struct{})}
	c.inflight[key] = f
	c.mu.Unlock()

	val, ttl := fn()

	c.mu.Lock()
	f.val = val
	delete(c.inflight, key)
	if ttl > 0 && c.max > 0 {
		c.entries[key] = c.lru.PushFront(&cacheEntry{key: key, val: val, expires: now.Add(ttl)})
		for c.lru.Len() > c.max {
			old := c.lru.Back()
			c.lru.Remove(old)
			delete(c.entries, old.Value.(*cacheEntry).key)
		}
	}
	c.mu.Unlock()
	close(f.done)
	return val
}
