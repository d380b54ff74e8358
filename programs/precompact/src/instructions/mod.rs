pub mod close;
pub mod initialize;
pub mod savepoint;

pub use close::*;
pub use initialize::*;
pub use savepoint::*;
