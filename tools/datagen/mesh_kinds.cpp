// The implicit models of the mesh kinds (mesh.h): each a list of ellipsoids, tapered capsules and
// tori, y up, z forward, x left-right. Paired parts sit about x = 0; the asymmetric details are
// what the comments name, and they are large (a whole limb, a tail, a head turned by 20-40
// degrees), so that they survive the coarsest grids of a few hundred vertices (where generate_mesh
// thickens the thin parts) and the mirror map stays clearly worse than the true map.
#include <algorithm>
#include <cmath>
#include <numbers>

#include "datagen/mesh_impl.h"

namespace gw::datagen::mesh_detail {
namespace {

constexpr double kDegree = std::numbers::pi / 180.0;

// Columns: the local axes in model coordinates, for R = Ry(yaw) Rx(pitch) Rz(roll), angles in
// degrees (yaw turns +z towards +x, pitch turns +z towards -y, roll turns +x towards +y).
std::array<double, 9> rotation(double yaw, double pitch, double roll) {
  const double cy = std::cos(yaw * kDegree), sy = std::sin(yaw * kDegree);
  const double cp = std::cos(pitch * kDegree), sp = std::sin(pitch * kDegree);
  const double cr = std::cos(roll * kDegree), sr = std::sin(roll * kDegree);
  const std::array<double, 9> ry{cy, 0, sy, 0, 1, 0, -sy, 0, cy};
  const std::array<double, 9> rx{1, 0, 0, 0, cp, -sp, 0, sp, cp};
  const std::array<double, 9> rz{cr, -sr, 0, sr, cr, 0, 0, 0, 1};
  auto mul = [](const std::array<double, 9>& a, const std::array<double, 9>& b) {
    std::array<double, 9> c{};
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int k = 0; k < 3; ++k) c[i * 3 + j] += a[i * 3 + k] * b[k * 3 + j];
      }
    }
    return c;
  };
  return mul(ry, mul(rx, rz));
}

class Builder {
 public:
  Builder& ellipsoid(const Vec3& centre,
                     const Vec3& radii,
                     double blend,
                     double yaw = 0.0,
                     double pitch = 0.0,
                     double roll = 0.0) {
    Primitive p;
    p.type = Primitive::Type::kEllipsoid;
    p.a = centre;
    p.radii = radii;
    p.blend = blend;
    p.frame = rotation(yaw, pitch, roll);
    model_.parts.push_back(p);
    return *this;
  }
  Builder& sphere(const Vec3& centre, double radius, double blend) {
    return ellipsoid(centre, {radius, radius, radius}, blend);
  }
  Builder& capsule(const Vec3& a, const Vec3& b, double ra, double rb, double blend) {
    Primitive p;
    p.type = Primitive::Type::kCapsule;
    p.a = a;
    p.b = b;
    p.ra = ra;
    p.rb = rb;
    p.blend = blend;
    model_.parts.push_back(p);
    return *this;
  }
  // A tube through `points` with the radius interpolated between consecutive `radii`; the first
  // segment blends into the model with `blend`, the joints between segments with a small fillet.
  Builder& chain(std::initializer_list<Vec3> points,
                 std::initializer_list<double> radii,
                 double blend) {
    const std::vector<Vec3> p(points);
    const std::vector<double> r(radii);
    for (std::size_t s = 0; s + 1 < p.size(); ++s) {
      capsule(p[s], p[s + 1], r[s], r[s + 1], s == 0 ? blend : 0.5 * r[s + 1]);
    }
    return *this;
  }
  // A ring of major radius `major` about the axis (pitch, yaw rotate the default axis +z).
  Builder& torus(
      const Vec3& centre, double major, double minor, double blend, double yaw, double pitch) {
    Primitive p;
    p.type = Primitive::Type::kTorus;
    p.a = centre;
    p.ra = major;
    p.rb = minor;
    p.blend = blend;
    p.frame = rotation(yaw, pitch, 0.0);
    model_.parts.push_back(p);
    return *this;
  }
  Model done() { return std::move(model_); }

 private:
  Model model_;
};

// Facing +z. Asymmetric: the nose bends to +x, the right ear (+x) sits higher and is smaller, the
// chin is off-centre, the neck leans to +x, a ponytail hangs from the left (-x) back of the head.
Model head() {
  return Builder()
      .ellipsoid({0.0, 0.25, -0.05}, {0.70, 0.78, 0.82}, 0.0)                     // cranium
      .ellipsoid({0.0, -0.22, 0.18}, {0.58, 0.62, 0.62}, 0.30)                    // face
      .ellipsoid({0.04, -0.72, 0.40}, {0.30, 0.20, 0.24}, 0.25)                   // chin
      .capsule({0.0, 0.04, 0.70}, {0.08, -0.22, 0.92}, 0.10, 0.11, 0.12)          // nose
      .ellipsoid({-0.70, 0.00, -0.08}, {0.09, 0.24, 0.15}, 0.08, 0.0, 0.0, -8.0)  // left ear
      .ellipsoid({0.70, 0.14, -0.02}, {0.09, 0.18, 0.12}, 0.08, 0.0, 0.0, 12.0)   // right ear
      .capsule({0.0, -0.55, -0.15}, {0.16, -1.25, -0.22}, 0.34, 0.36, 0.20)       // neck
      .chain({{-0.50, 0.55, -0.55},
              {-0.85, 0.30, -0.72},
              {-0.98, -0.15, -0.72},
              {-0.92, -0.62, -0.60}},
             {0.13, 0.15, 0.12, 0.08},
             0.12)  // ponytail
      .done();
}

// Crouching, facing +z. Asymmetric: head turned to +x by 40 degrees, the left ear long and
// upright, the right ear short and flopped down sideways, the right front paw ahead of the left.
Model bunny() {
  return Builder()
      .ellipsoid({0.0, 0.0, 0.0}, {0.50, 0.48, 0.72}, 0.0, 0.0, -10.0)  // body
      .ellipsoid({-0.28, -0.10, -0.30}, {0.26, 0.36, 0.42}, 0.15)       // haunches
      .ellipsoid({0.28, -0.10, -0.30}, {0.26, 0.36, 0.42}, 0.15)
      .ellipsoid({0.0, 0.08, 0.45}, {0.36, 0.40, 0.34}, 0.20)         // chest
      .ellipsoid({0.16, 0.58, 0.74}, {0.28, 0.27, 0.34}, 0.18, 40.0)  // head
      .ellipsoid({0.36, 0.52, 0.96}, {0.14, 0.13, 0.14}, 0.10)        // snout
      .chain({{0.02, 0.78, 0.66}, {-0.08, 1.25, 0.60}, {-0.12, 1.68, 0.50}},
             {0.10, 0.11, 0.07},
             0.08)  // left ear, upright
      .chain({{0.30, 0.76, 0.70}, {0.58, 0.90, 0.62}, {0.80, 0.70, 0.50}},
             {0.09, 0.10, 0.07},
             0.08)                                               // right ear, flopped
      .sphere({0.05, 0.16, -0.76}, 0.15, 0.08)                   // tail
      .ellipsoid({0.18, -0.44, 0.64}, {0.10, 0.09, 0.17}, 0.10)  // front paws
      .ellipsoid({-0.18, -0.44, 0.46}, {0.10, 0.09, 0.17}, 0.10)
      .ellipsoid({0.30, -0.44, -0.12}, {0.13, 0.08, 0.30}, 0.12)  // hind feet
      .ellipsoid({-0.30, -0.44, -0.16}, {0.13, 0.08, 0.30}, 0.12)
      .done();
}

// Handle at -x, spout towards azimuth 35 degrees (between +x and +z), so that no vertical plane
// maps the pot onto itself; the knob is off-centre, an emblem bulges on the front, the handle
// carries a thumb rest.
Model teapot() {
  const Vec3 u{std::cos(35.0 * kDegree), 0.0, std::sin(35.0 * kDegree)};
  auto spout = [&u](double r, double y) { return Vec3{r * u[0], y, r * u[2]}; };
  return Builder()
      .ellipsoid({0.0, 0.0, 0.0}, {0.85, 0.62, 0.85}, 0.0)     // body
      .ellipsoid({0.0, -0.50, 0.0}, {0.62, 0.14, 0.62}, 0.10)  // foot
      .ellipsoid({0.0, 0.56, 0.0}, {0.50, 0.12, 0.50}, 0.08)   // lid
      .sphere({0.08, 0.74, 0.06}, 0.11, 0.08)                  // knob
      .chain({spout(0.62, -0.15), spout(0.95, 0.12), spout(1.16, 0.42), spout(1.24, 0.56)},
             {0.17, 0.12, 0.09, 0.08},
             0.15)                                             // spout
      .torus({-0.86, 0.05, 0.0}, 0.36, 0.08, 0.10, 0.0, 0.0)   // handle
      .sphere({-1.00, 0.38, 0.06}, 0.10, 0.06)                 // thumb rest
      .ellipsoid({0.0, 0.05, 0.80}, {0.26, 0.22, 0.10}, 0.08)  // emblem
      .done();
}

// A saguaro: arms towards azimuths 0, 150 and 260 degrees, at three heights and lengths.
Model cactus() {
  auto at = [](double azimuth, double r, double y) {
    return Vec3{r * std::cos(azimuth * kDegree), y, r * std::sin(azimuth * kDegree)};
  };
  return Builder()
      .capsule({0.0, -1.0, 0.0}, {0.0, 1.05, 0.0}, 0.28, 0.25, 0.0)  // trunk
      .ellipsoid({0.0, -1.02, 0.0}, {0.36, 0.12, 0.36}, 0.12)        // mound
      .chain({at(0, 0.15, -0.20), at(0, 0.62, -0.12), at(0, 0.72, 0.15), at(0, 0.72, 0.62)},
             {0.17, 0.16, 0.16, 0.14},
             0.12)  // low arm
      .chain({at(150, 0.15, 0.30), at(150, 0.52, 0.36), at(150, 0.62, 0.58), at(150, 0.62, 0.95)},
             {0.15, 0.14, 0.14, 0.12},
             0.10)  // high arm
      .chain({at(260, 0.15, 0.55), at(260, 0.38, 0.60), at(260, 0.44, 0.80)},
             {0.11, 0.10, 0.09},
             0.08)  // short arm
      .done();
}

// A dog facing +z. Asymmetric: head turned to +x, legs in a walking pose (left front and right
// hind forward), tail curled to +x, the right ear flopped.
Model quadruped() {
  return Builder()
      .ellipsoid({0.0, 0.0, 0.0}, {0.34, 0.34, 0.85}, 0.0)                // torso
      .ellipsoid({0.0, 0.03, 0.48}, {0.36, 0.40, 0.40}, 0.20)             // chest
      .capsule({0.0, 0.20, 0.70}, {0.12, 0.55, 0.95}, 0.18, 0.15, 0.15)   // neck
      .ellipsoid({0.20, 0.68, 1.05}, {0.22, 0.20, 0.26}, 0.12, 35.0)      // head
      .capsule({0.26, 0.64, 1.16}, {0.40, 0.60, 1.38}, 0.11, 0.09, 0.08)  // muzzle
      .capsule({0.10, 0.84, 1.00}, {0.06, 1.02, 0.95}, 0.07, 0.06, 0.06)  // left ear
      .capsule({0.32, 0.84, 1.02}, {0.46, 0.90, 0.96}, 0.07, 0.06, 0.06)  // right ear
      .chain({{-0.20, -0.15, 0.55}, {-0.22, -0.60, 0.72}, {-0.22, -1.00, 0.66}},
             {0.12, 0.10, 0.09},
             0.12)  // left front, forward
      .chain({{0.20, -0.15, 0.55}, {0.21, -0.60, 0.48}, {0.20, -1.00, 0.50}},
             {0.12, 0.10, 0.09},
             0.12)  // right front
      .chain({{-0.20, -0.10, -0.60}, {-0.24, -0.55, -0.75}, {-0.22, -1.00, -0.72}},
             {0.13, 0.10, 0.09},
             0.12)  // left hind
      .chain({{0.20, -0.10, -0.60}, {0.22, -0.55, -0.52}, {0.22, -1.00, -0.40}},
             {0.13, 0.10, 0.09},
             0.12)  // right hind, forward
      .chain({{0.0, 0.15, -0.80}, {0.15, 0.40, -1.05}, {0.35, 0.55, -1.10}, {0.52, 0.60, -0.98}},
             {0.08, 0.08, 0.07, 0.07},
             0.08)  // tail
      .done();
}

// Standing, facing +z. Asymmetric: the left wing (-x) raised and spread, the right wing folded
// against the body, head and beak turned to +x, the right leg lifted.
Model bird() {
  return Builder()
      .ellipsoid({0.0, 0.0, 0.0}, {0.35, 0.38, 0.60}, 0.0, 0.0, -20.0)           // body
      .sphere({0.08, 0.55, 0.48}, 0.23, 0.15)                                    // head
      .capsule({0.16, 0.53, 0.66}, {0.34, 0.48, 0.90}, 0.09, 0.05, 0.06)         // beak
      .ellipsoid({-0.62, 0.38, 0.0}, {0.56, 0.08, 0.30}, 0.12, 0.0, 0.0, -30.0)  // left wing
      .ellipsoid({0.30, 0.05, -0.08}, {0.09, 0.28, 0.50}, 0.10, 0.0, -15.0)      // right wing
      .ellipsoid({0.0, -0.06, -0.76}, {0.22, 0.07, 0.30}, 0.10, 0.0, -15.0)      // tail
      .chain({{-0.12, -0.30, 0.05}, {-0.12, -0.80, 0.10}}, {0.08, 0.07}, 0.08)   // left leg
      .ellipsoid({-0.12, -0.84, 0.20}, {0.09, 0.05, 0.16}, 0.05)                 // left foot
      .chain({{0.12, -0.30, 0.05}, {0.14, -0.55, 0.25}, {0.14, -0.68, 0.18}},
             {0.08, 0.07, 0.07},
             0.08)                                               // right leg, lifted
      .ellipsoid({0.14, -0.72, 0.26}, {0.09, 0.05, 0.14}, 0.05)  // right foot
      .done();
}

// A right hand, palm facing -z, fingers up. Fingers of different lengths, curling to the palm
// side by different amounts; the thumb on +x, reaching forward.
Model hand() {
  Builder b;
  b.ellipsoid({0.0, 0.0, 0.0}, {0.46, 0.50, 0.17}, 0.0);               // palm
  b.capsule({0.0, -0.40, 0.0}, {0.0, -1.10, 0.03}, 0.22, 0.25, 0.15);  // forearm
  // Finger base x, length, curl (degrees per joint towards -z), splay (degrees towards +x).
  struct Finger {
    double x, length, curl, splay, radius;
  };
  const Finger fingers[] = {{0.31, 0.74, 5.0, 10.0, 0.085},
                            {0.10, 0.86, 15.0, 2.0, 0.088},
                            {-0.11, 0.78, 32.0, -6.0, 0.085},
                            {-0.31, 0.58, 50.0, -14.0, 0.078}};
  for (const Finger& f : fingers) {
    Vec3 p{f.x, 0.42, 0.0};
    const double segment = f.length / 3.0;
    double angle = 0.0;
    std::array<Vec3, 4> joints{p};
    for (int s = 1; s <= 3; ++s) {
      angle += f.curl;
      const double dy = std::cos(angle * kDegree), dz = -std::sin(angle * kDegree);
      p = {p[0] + segment * std::sin(f.splay * kDegree), p[1] + segment * dy, p[2] + segment * dz};
      joints[s] = p;
    }
    b.chain({joints[0], joints[1], joints[2], joints[3]},
            {f.radius, f.radius, 0.95 * f.radius, 0.9 * f.radius},
            0.08);
  }
  b.chain({{0.36, -0.18, -0.04}, {0.62, 0.02, -0.16}, {0.78, 0.26, -0.24}, {0.84, 0.44, -0.28}},
          {0.13, 0.11, 0.10, 0.09},
          0.12);  // thumb
  return b.done();
}

// Standing, facing +z. Asymmetric: the left arm (-x) raised and bent, the right arm down and
// forward, the right leg stepping forward with a bent knee, the head tilted.
Model human() {
  return Builder()
      .ellipsoid({0.0, 0.30, 0.0}, {0.42, 0.60, 0.26}, 0.0)                      // torso
      .ellipsoid({0.0, -0.35, 0.0}, {0.38, 0.26, 0.23}, 0.20)                    // pelvis
      .capsule({0.0, 0.82, 0.0}, {0.03, 1.05, 0.0}, 0.12, 0.11, 0.10)            // neck
      .ellipsoid({0.05, 1.26, 0.02}, {0.22, 0.27, 0.24}, 0.08, 0.0, 0.0, -10.0)  // head
      .chain({{-0.42, 0.72, 0.0}, {-0.80, 1.00, 0.18}, {-0.86, 1.46, 0.42}},
             {0.13, 0.11, 0.09},
             0.12)                              // left arm
      .sphere({-0.87, 1.58, 0.48}, 0.11, 0.06)  // left hand
      .chain({{0.42, 0.72, 0.0}, {0.55, 0.24, 0.12}, {0.58, -0.18, 0.32}},
             {0.13, 0.11, 0.09},
             0.12)                              // right arm
      .sphere({0.58, -0.31, 0.37}, 0.11, 0.06)  // right hand
      .chain({{-0.20, -0.50, 0.0}, {-0.22, -1.25, 0.02}, {-0.22, -2.00, 0.0}},
             {0.17, 0.13, 0.11},
             0.15)                                                // left leg
      .ellipsoid({-0.22, -2.06, 0.12}, {0.10, 0.07, 0.19}, 0.06)  // left foot
      .chain({{0.20, -0.50, 0.0}, {0.25, -1.08, 0.48}, {0.25, -1.80, 0.40}},
             {0.17, 0.13, 0.11},
             0.15)                                               // right leg
      .ellipsoid({0.25, -1.87, 0.54}, {0.10, 0.07, 0.19}, 0.06)  // right foot
      .done();
}

// A lizard facing +z, standing on its legs with its head raised. Asymmetric: the tail curls to +x,
// legs in a walking pose (left front and right hind forward), head turned to +x.
Model lizard() {
  return Builder()
      .ellipsoid({0.0, 0.0, 0.0}, {0.28, 0.18, 0.72}, 0.0)                   // body
      .ellipsoid({0.10, 0.16, 0.88}, {0.20, 0.14, 0.30}, 0.15, 20.0, -20.0)  // head
      .chain({{0.0, 0.0, -0.62},
              {0.10, 0.0, -1.10},
              {0.40, 0.0, -1.45},
              {0.76, 0.0, -1.55},
              {1.00, 0.0, -1.35},
              {1.05, 0.0, -1.10}},
             {0.16, 0.12, 0.10, 0.09, 0.08, 0.07},
             0.12)  // tail
      .chain({{-0.22, -0.04, 0.45}, {-0.50, -0.02, 0.62}, {-0.56, -0.40, 0.76}},
             {0.09, 0.08, 0.07},
             0.08)  // left front, forward
      .chain({{0.22, -0.04, 0.45}, {0.50, -0.02, 0.34}, {0.56, -0.40, 0.30}},
             {0.09, 0.08, 0.07},
             0.08)  // right front
      .chain({{-0.22, -0.04, -0.45}, {-0.50, -0.02, -0.60}, {-0.56, -0.40, -0.66}},
             {0.10, 0.08, 0.07},
             0.08)  // left hind
      .chain({{0.22, -0.04, -0.45}, {0.50, -0.02, -0.30}, {0.60, -0.40, -0.20}},
             {0.10, 0.08, 0.07},
             0.08)  // right hind, forward
      .done();
}

}  // namespace

Model model_of(MeshKind kind) {
  switch (kind) {
    case MeshKind::kHead:
      return head();
    case MeshKind::kBunny:
      return bunny();
    case MeshKind::kTeapot:
      return teapot();
    case MeshKind::kCactus:
      return cactus();
    case MeshKind::kQuadruped:
      return quadruped();
    case MeshKind::kBird:
      return bird();
    case MeshKind::kHand:
      return hand();
    case MeshKind::kHuman:
      return human();
    case MeshKind::kLizard:
      return lizard();
  }
  return head();
}

Model stretched(const Model& model, const Vec3& stretch) {
  const double mean = std::cbrt(stretch[0] * stretch[1] * stretch[2]);
  Model out = model;
  for (Primitive& part : out.parts) {
    for (int c = 0; c < 3; ++c) {
      part.a[c] *= stretch[c];
      part.b[c] *= stretch[c];
    }
    const bool axis_aligned = part.frame == std::array<double, 9>{1, 0, 0, 0, 1, 0, 0, 0, 1};
    for (int c = 0; c < 3; ++c) part.radii[c] *= axis_aligned ? stretch[c] : mean;
    part.ra *= mean;
    part.rb *= mean;
    part.blend *= mean;
  }
  return out;
}

Model thickened(const Model& model, double min_radius) {
  Model out = model;
  for (Primitive& part : out.parts) {
    if (part.type == Primitive::Type::kEllipsoid) {
      for (double& r : part.radii) r = std::max(r, min_radius);
    } else {
      // Capsule: both end radii; torus: the minor radius (rb) only.
      if (part.type == Primitive::Type::kCapsule) part.ra = std::max(part.ra, min_radius);
      part.rb = std::max(part.rb, min_radius);
    }
  }
  return out;
}

}  // namespace gw::datagen::mesh_detail
