pub mod shapes {
    pub struct Circle { pub r: f64 }
    pub trait Area { fn area(&self) -> f64; }
    impl Area for Circle { #[inline(never)] fn area(&self) -> f64 { 3.14 * self.r * self.r } }
    impl Circle { #[inline(never)] pub fn new(r: f64) -> Circle { Circle { r } } }
    #[inline(never)] pub fn total<T: Area>(v: &[T]) -> f64 { v.iter().map(|x| x.area()).sum() }
    pub struct Pair<A, B>(pub A, pub B);
    impl<A: Clone, B> Pair<A, B> { #[inline(never)] pub fn first(&self) -> A { self.0.clone() } }
}
#[inline(never)] pub fn use_all() -> f64 {
    let v = vec![shapes::Circle::new(1.0), shapes::Circle::new(2.0)];
    let p = shapes::Pair(5u32, "x");
    let q = shapes::Pair([1u8; 3], 'c');
    shapes::total(&v) + p.first() as f64 + q.first()[0] as f64
}
