//! libstdc++'s `std::sort` of indices, which NumPy's argsort falls back to (NaN present, or
//! the quicksort's recursion budget spent).

/// libstdc++'s `std::sort` (introsort: median-of-three, unguarded partition, heapsort past
/// `2·⌊log₂ n⌋` levels, final insertion sort) with the strict order `less`.
pub(super) fn std_sort(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) {
    if v.len() < 2 {
        return;
    }
    let depth = 2 * v.len().ilog2() as usize;
    introsort_loop(v, depth, less);
    final_insertion_sort(v, less);
}

/// libstdc++'s size below which ranges are left to the final insertion sort.
const STD_THRESHOLD: usize = 16;

/// libstdc++'s `__introsort_loop`: partitions, recursing into the right part and looping on
/// the left, until ranges are small or the depth budget is spent (then heapsort).
fn introsort_loop(v: &mut [usize], depth: usize, less: &dyn Fn(usize, usize) -> bool) {
    let mut depth = depth;
    let mut last = v.len();
    while last > STD_THRESHOLD {
        if depth == 0 {
            heap_sort(&mut v[..last], less);
            return;
        }
        depth -= 1;
        let cut = partition_pivot(&mut v[..last], less);
        introsort_loop(&mut v[cut..last], depth, less);
        last = cut;
    }
}

/// `__unguarded_partition_pivot`: the median of the second, middle and last elements is
/// moved to the front and the rest partitioned around it; returns the cut.
fn partition_pivot(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) -> usize {
    let len = v.len();
    let (a, b, c) = (1, len / 2, len - 1);
    let median = if less(v[a], v[b]) {
        if less(v[b], v[c]) {
            b
        } else if less(v[a], v[c]) {
            c
        } else {
            a
        }
    } else if less(v[a], v[c]) {
        a
    } else if less(v[b], v[c]) {
        c
    } else {
        b
    };
    v.swap(0, median);
    let pivot = v[0];
    let (mut first, mut last) = (1, len);
    loop {
        while less(v[first], pivot) {
            first += 1;
        }
        last -= 1;
        while less(pivot, v[last]) {
            last -= 1;
        }
        if first >= last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

/// libstdc++'s `__final_insertion_sort`: a guarded insertion sort of the first 16 elements,
/// then unguarded insertion of the rest.
fn final_insertion_sort(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) {
    let len = v.len();
    let guarded = len.min(STD_THRESHOLD);
    for i in 1..guarded {
        let x = v[i];
        if less(x, v[0]) {
            v.copy_within(0..i, 1);
            v[0] = x;
        } else {
            unguarded_linear_insert(v, i, less);
        }
    }
    for i in guarded..len {
        unguarded_linear_insert(v, i, less);
    }
}

/// libstdc++'s `__unguarded_linear_insert`: moves `v[at]` down past larger elements.
fn unguarded_linear_insert(v: &mut [usize], at: usize, less: &dyn Fn(usize, usize) -> bool) {
    let x = v[at];
    let mut hole = at;
    while hole > 0 && less(x, v[hole - 1]) {
        v[hole] = v[hole - 1];
        hole -= 1;
    }
    v[hole] = x;
}

/// libstdc++'s `__partial_sort(first, last, last)`: make_heap then sort_heap.
fn heap_sort(v: &mut [usize], less: &dyn Fn(usize, usize) -> bool) {
    let len = v.len();
    if len < 2 {
        return;
    }
    let mut parent = (len - 2) / 2;
    loop {
        let x = v[parent];
        adjust_heap(v, parent, len, x, less);
        if parent == 0 {
            break;
        }
        parent -= 1;
    }
    let mut last = len;
    while last > 1 {
        last -= 1;
        let x = v[last];
        v[last] = v[0];
        adjust_heap(v, 0, last, x, less);
    }
}

/// libstdc++'s `__adjust_heap`: sinks the hole at `hole` to a leaf along larger children,
/// then sifts `x` up from there (`__push_heap`).
fn adjust_heap(
    v: &mut [usize],
    hole: usize,
    len: usize,
    x: usize,
    less: &dyn Fn(usize, usize) -> bool,
) {
    let top = hole;
    let mut hole = hole;
    let mut child = hole;
    while child < (len - 1) / 2 {
        child = 2 * (child + 1);
        if less(v[child], v[child - 1]) {
            child -= 1;
        }
        v[hole] = v[child];
        hole = child;
    }
    if len.is_multiple_of(2) && child == (len - 2) / 2 {
        child = 2 * (child + 1);
        v[hole] = v[child - 1];
        hole = child - 1;
    }
    // Sift up, as `__push_heap`.
    let mut parent = hole.saturating_sub(1) / 2;
    while hole > top && less(v[parent], x) {
        v[hole] = v[parent];
        hole = parent;
        parent = hole.saturating_sub(1) / 2;
    }
    v[hole] = x;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn std_sort_orders_values() {
        let values: Vec<f64> = (0..500).map(|i| ((i * 31) % 17) as f64).collect();
        let mut v: Vec<usize> = (0..500).collect();
        std_sort(&mut v, &|a, b| values[a] < values[b]);
        assert!(v.windows(2).all(|w| values[w[0]] <= values[w[1]]));
        let mut h: Vec<usize> = (0..500).collect();
        heap_sort(&mut h, &|a, b| values[a] < values[b]);
        assert!(h.windows(2).all(|w| values[w[0]] <= values[w[1]]));
    }
}
