package sim

import "container/list"

// lru is a small least-recently-used cache; the caller locks.
type lru[K comparable, V any] struct {
	cap   int
	order *list.List // of K, most recent at the front
	items map[K]*list.Element
	vals  map[K]V
}

func newLRU[K comparable, V any](n int) *lru[K, V] {
	return &lru[K, V]{cap: n, order: list.New(), items: map[K]*list.Element{}, vals: map[K]V{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	e, ok := c.items[k]
	if !ok {
		var zero V
		return zero, false
	}
	c.order.MoveToFront(e)
	return c.vals[k], true
}

func (c *lru[K, V]) put(k K, v V) {
	if e, ok := c.items[k]; ok {
		c.order.MoveToFront(e)
		c.vals[k] = v
		return
	}
	c.items[k] = c.order.PushFront(k)
	c.vals[k] = v
	for c.order.Len() > c.cap {
		old := c.order.Back()
		c.order.Remove(old)
		delete(c.items, old.Value.(K))
		delete(c.vals, old.Value.(K))
	}
}
