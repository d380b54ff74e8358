pub mod close;
pub mod initialize;
pub mod recover_lineage;
pub mod rotate_authority;
pub mod savepoint;

pub use close::*;
pub use initialize::*;
pub use recover_lineage::*;
pub use rotate_authority::*;
pub use savepoint::*;
