//! What a reduction reads: host slices, and cudarc buffers on the GPU.

use crate::element::Element;
use cudarc::driver::{CudaSlice, CudaView, CudaViewMut, DevicePtr};

/// Data a [`Reducer`](crate::Reducer) can reduce: a host slice (`[T]`, `Vec<T>`, `[T; N]`),
/// which is copied to the GPU, or a cudarc buffer (`CudaSlice<T>`, `CudaView<T>`,
/// `CudaViewMut<T>`), which is read where it is.
///
/// ```
/// use reduce_rs::{Input, Reducer};
/// let reducer = Reducer::simulator();
/// let data = vec![1.0f32, 2.0, 3.5];
/// assert_eq!(data.len(), Input::<f32>::len(&data));
/// assert_eq!(reducer.sum(&data)?, 6.5);
/// assert_eq!(reducer.sum(&data[1..])?, 5.5);
/// assert_eq!(reducer.sum(&[2u64, 3])?, 5);
/// # Ok::<(), reduce_rs::Error>(())
/// ```
pub trait Input<T: Element> {
    /// Number of elements.
    fn len(&self) -> usize;
    /// No elements.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Where the elements are.
    #[doc(hidden)]
    fn source(&self) -> Source<'_, T>;
}

/// Where an [`Input`]'s elements are.
#[doc(hidden)]
pub enum Source<'a, T> {
    Host(&'a [T]),
    Device(&'a dyn DevicePtr<T>),
}

/// A reference to an input is an input (so shards can be `&[T]` pieces of one slice).
impl<T: Element, I: Input<T> + ?Sized> Input<T> for &I {
    fn len(&self) -> usize {
        (**self).len()
    }
    fn source(&self) -> Source<'_, T> {
        (**self).source()
    }
}

impl<T: Element> Input<T> for [T] {
    fn len(&self) -> usize {
        <[T]>::len(self)
    }
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T: Element> Input<T> for Vec<T> {
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T: Element, const N: usize> Input<T> for [T; N] {
    fn len(&self) -> usize {
        N
    }
    fn source(&self) -> Source<'_, T> {
        Source::Host(self)
    }
}

impl<T: Element> Input<T> for CudaSlice<T> {
    fn len(&self) -> usize {
        CudaSlice::len(self)
    }
    fn source(&self) -> Source<'_, T> {
        Source::Device(self)
    }
}

impl<T: Element> Input<T> for CudaView<'_, T> {
    fn len(&self) -> usize {
        CudaView::len(self)
    }
    fn source(&self) -> Source<'_, T> {
        Source::Device(self)
    }
}

impl<T: Element> Input<T> for CudaViewMut<'_, T> {
    fn len(&self) -> usize {
        CudaViewMut::len(self)
    }
    fn source(&self) -> Source<'_, T> {
        Source::Device(self)
    }
}
