package search

import (
	"container/list"
	"sync"
	"time"
)

// resultCache is a size-bounded LRU of responses whose entries expire after
// a fixed TTL. It is safe for concurrent use.
type resultCache struct {
	ttl  time.Duration
	size int
	now  func() time.Time

	mu        sync.Mutex
	entries   map[string]*list.Element
	order     *list.List // front = most recently used
	evictions uint64
}

type cacheEntry struct {
	key     string
	resp    Response
	expires time.Time
}

func newResultCache(size int, ttl time.Duration, now func() time.Time) *resultCache {
	return &resultCache{ttl: ttl, size: size, now: now, entries: make(map[string]*list.Element), order: list.New()}
}

// get returns a copy of the cached response for key, if fresh.
func (c *resultCache) get(key string) (Response, bool) {
	if c.size <= 0 || c.ttl <= 0 {
		return Response{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return Response{}, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.expires) {
		c.order.Remove(el)
		delete(c.entries, key)
		return Response{}, false
	}
	c.order.MoveToFront(el)
	return e.resp, true
}

// put stores resp under key, evicting the least recently used entry when
// full. The stored slices must not be modified afterwards.
func (c *resultCache) put(key string, resp Response) {
	if c.size <= 0 || c.ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	expires := c.now().Add(c.ttl)
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*cacheEntry)
		e.resp, e.expires = resp, expires
		c.order.MoveToFront(el)
		return
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, resp: resp, expires: expires})
	for c.order.Len() > c.size {
		oldest := c.order.Back()
		c.order.Remove(oldest)
		delete(c.entries, oldest.Value.(*cacheEntry).key)
		c.evictions++
	}
}

// clear drops every entry.
func (c *resultCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.entries)
	c.order.Init()
}

func (c *resultCache) stats() (entries int, evictions uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len(), c.evictions
}
