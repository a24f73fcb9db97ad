//! Paged `*/list` answers: items in key order, the cursor the last key of
//! the page before (so a page stays right when items come and go between
//! two requests); the page size is
//! [`ServeOptions::page_size`](crate::ServeOptions::page_size).

/// The page after `cursor` (none: the first) of `items`, sorted by key, and
/// the next page's cursor when more follow.
pub(crate) fn page<'a, T: Clone + 'a>(
    items: impl Iterator<Item = (&'a String, T)>,
    cursor: Option<&str>,
    size: usize,
) -> (Vec<T>, Option<String>) {
    let mut rest = items.skip_while(|(key, _)| cursor.is_some_and(|c| key.as_str() <= c));
    let mut out = Vec::new();
    let mut last = None;
    for (key, item) in rest.by_ref().take(size) {
        out.push(item);
        last = Some(key.clone());
    }
    let next = if rest.next().is_some() { last } else { None };
    (out, next)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn pages_follow_keys() {
        let items: BTreeMap<String, u32> = (1..=5).map(|i| (format!("k{i}"), i)).collect();
        let (p1, c1) = page(items.iter().map(|(k, v)| (k, *v)), None, 2);
        assert_eq!((p1, c1.as_deref()), (vec![1, 2], Some("k2")));
        let (p2, c2) = page(items.iter().map(|(k, v)| (k, *v)), c1.as_deref(), 2);
        assert_eq!((p2, c2.as_deref()), (vec![3, 4], Some("k4")));
        let (p3, c3) = page(items.iter().map(|(k, v)| (k, *v)), c2.as_deref(), 2);
        assert_eq!((p3, c3), (vec![5], None));
        let (all, none) = page(items.iter().map(|(k, v)| (k, *v)), None, 5);
        assert_eq!((all.len(), none), (5, None));
    }
}
